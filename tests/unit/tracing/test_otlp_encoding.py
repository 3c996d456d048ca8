"""Our OTLP encoder writes exactly the bytes of the SDK's, for the SDK's spans and for ours."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from kjournal_service.tracing.lean import LeanTracerProvider
from kjournal_service.tracing.otlp_encoding import encode_spans
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encoding
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
    set_span_in_context,
)

REMOTE = SpanContext(
    0x0AF7651916CD43DD8448EB211C80319C,
    0xB7AD6B7169203331,
    is_remote=True,
    trace_flags=TraceFlags(TraceFlags.SAMPLED),
    trace_state=TraceState([("vendor", "x1"), ("other", "y")]),
)


def _recorded(provider_type: type[TracerProvider], attributes: dict[str, Any]) -> list[Any]:
    memory = InMemorySpanExporter()
    provider = provider_type(
        resource=Resource.create({"service.name": "test", "deployment": ["a", "b"], "n": 1.5}),
        shutdown_on_exit=False,
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    ours = provider.get_tracer("kjournal", "0.1.0")
    other = provider.get_tracer("other")
    parent = set_span_in_context(NonRecordingSpan(REMOTE))
    with ours.start_as_current_span(
        "POST /v1/journals/{topic}/{id}/events",
        context=parent,
        kind=SpanKind.SERVER,
        attributes=attributes,
    ) as root:
        root.add_event("quarantined", {"messaging.kafka.offset": 7, "kjournal.reason": "bad"})
        with other.start_as_current_span(
            "process journal", kind=SpanKind.CONSUMER, links=[Link(REMOTE, {"n": 1}), Link(REMOTE)]
        ) as child:
            child.set_status(Status(StatusCode.ERROR, "boom"))
        with ours.start_as_current_span("send journal", kind=SpanKind.PRODUCER) as sent:
            sent.set_status(StatusCode.OK)
        with ours.start_as_current_span("pointer2"):
            pass
    return list(memory.get_finished_spans())


def _same_bytes(spans: list[ReadableSpan]) -> None:
    assert encode_spans(spans) == sdk_encoding(spans).SerializeToString()


ATTRIBUTES = {
    "text": "é ü 中",
    "empty": "",
    "yes": True,
    "no": False,
    "zero": 0,
    "negative": -5,
    "large": 2**62,
    "ratio": 0.25,
    "texts": ("a", "b"),
    "numbers": (1, 2, 3),
}


def test_the_sdks_spans_encode_to_the_sdks_bytes() -> None:
    _same_bytes(_recorded(TracerProvider, ATTRIBUTES))


def test_lean_spans_encode_to_the_sdks_bytes() -> None:
    _same_bytes(_recorded(LeanTracerProvider, ATTRIBUTES))


def test_spans_of_two_resources_in_one_batch() -> None:
    _same_bytes(_recorded(LeanTracerProvider, {}) + _recorded(TracerProvider, {"a": 1}))


scalars = st.one_of(
    st.text(max_size=80),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
)
values = st.one_of(
    scalars,
    st.lists(st.text(max_size=10), max_size=3).map(tuple),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=30), values, max_size=12))
def test_any_attributes_encode_to_the_sdks_bytes(attributes: dict[str, Any]) -> None:
    _same_bytes(_recorded(LeanTracerProvider, attributes))


def test_cached_attribute_fields_never_stand_for_an_equal_value_of_another_type() -> None:
    # True == 1 == 1.0, and "1" is none of them: each is cached (or not) as itself
    for value in (1, True, 1.0, "1", 1, 1.0, True, 70000, 70000.0):
        _same_bytes(_recorded(LeanTracerProvider, {"x": value, "n": 2}))
