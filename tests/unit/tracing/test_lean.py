"""`LeanSpan` behaves as the SDK's span where it matters: ids and parents, sampling, limits,
status rules, exceptions, and what the span processors receive."""

from __future__ import annotations

import pytest
from kjournal_service.tracing.lean import LIMIT, LeanSpan, LeanTracerProvider
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, TraceIdRatioBased
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    set_span_in_context,
)


class Recorded(SpanProcessor):
    def __init__(self) -> None:
        self.started: list[object] = []
        self.ended: list[ReadableSpan] = []

    def on_start(self, span: object, parent_context: object = None) -> None:
        self.started.append(span)

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


def _provider(**options: object) -> tuple[LeanTracerProvider, Recorded]:
    provider = LeanTracerProvider(shutdown_on_exit=False, **options)  # type: ignore[arg-type]
    recorded = Recorded()
    provider.add_span_processor(recorded)
    return provider, recorded


def test_children_share_the_trace_of_their_parent_and_name_it() -> None:
    provider, recorded = _provider()
    tracer = provider.get_tracer("t")
    with (
        tracer.start_as_current_span("root", kind=SpanKind.SERVER) as root,
        tracer.start_as_current_span("child") as child,
    ):
        pass
    assert isinstance(root, LeanSpan)
    assert isinstance(child, LeanSpan)
    assert [span.name for span in recorded.ended] == ["child", "root"]
    ended_child, ended_root = recorded.ended
    assert ended_root.parent is None
    assert ended_child.parent == root.get_span_context()
    assert child.get_span_context().trace_id == root.get_span_context().trace_id
    assert child.get_span_context().trace_flags.sampled
    assert ended_root.kind is SpanKind.SERVER
    assert ended_root.start_time is not None
    assert ended_root.end_time is not None
    assert ended_root.start_time <= ended_root.end_time


def test_a_remote_parent_is_continued() -> None:
    provider, recorded = _provider()
    remote = SpanContext(7, 9, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    with provider.get_tracer("t").start_as_current_span(
        "server", context=set_span_in_context(NonRecordingSpan(remote))
    ) as span:
        pass
    assert span.get_span_context().trace_id == 7
    assert recorded.ended[0].parent == remote


def test_an_unsampled_parent_makes_unrecorded_children() -> None:
    provider, recorded = _provider()
    remote = SpanContext(7, 9, is_remote=True, trace_flags=TraceFlags(TraceFlags.DEFAULT))
    span = provider.get_tracer("t").start_span(
        "server", context=set_span_in_context(NonRecordingSpan(remote))
    )
    assert not span.is_recording()
    span.end()
    assert recorded.ended == []


@pytest.mark.parametrize(
    ("sampler", "recorded_count"), [(ALWAYS_OFF, 0), (TraceIdRatioBased(1.0), 1)]
)
def test_the_providers_sampler_decides(sampler: object, recorded_count: int) -> None:
    provider, recorded = _provider(sampler=sampler)
    with provider.get_tracer("t").start_as_current_span("s"):
        pass
    assert len(recorded.ended) == recorded_count


def test_attributes_events_and_links_are_bounded_and_counted() -> None:
    provider, recorded = _provider()
    link = Link(SpanContext(1, 2, is_remote=True))
    span = provider.get_tracer("t").start_span("s", links=[link] * (LIMIT + 3))
    for n in range(LIMIT + 5):
        span.set_attribute(f"k{n}", n)
        span.add_event(f"e{n}")
    span.set_attribute("k0", "replaced")  # an existing key is always set
    span.set_attribute("invalid", object())  # type: ignore[arg-type]
    span.end()
    (ended,) = recorded.ended
    assert len(ended.attributes or {}) == LIMIT
    assert ended.dropped_attributes == 5
    assert (ended.attributes or {})["k0"] == "replaced"
    assert len(ended.events) == LIMIT
    assert ended.dropped_events == 5
    assert len(ended.links) == LIMIT
    assert ended.dropped_links == 3


def test_sequences_become_tuples_and_mixed_ones_are_dropped() -> None:
    provider, recorded = _provider()
    span = provider.get_tracer("t").start_span("s", attributes={"list": ["a", "b"]})
    span.set_attribute("mixed", ["a", 1])
    span.end()
    assert dict(recorded.ended[0].attributes or {}) == {"list": ("a", "b")}


def test_status_ok_is_final_and_unset_changes_nothing() -> None:
    provider, recorded = _provider()
    span = provider.get_tracer("t").start_span("s")
    span.set_status(StatusCode.ERROR, "first")
    span.set_status(Status(StatusCode.UNSET))
    assert recorded.started
    assert span.is_recording()
    span.set_status(StatusCode.OK)
    span.set_status(StatusCode.ERROR)
    span.end()
    assert recorded.ended[0].status.status_code is StatusCode.OK


def test_an_exception_is_an_event_and_an_error() -> None:
    provider, recorded = _provider()
    with (
        pytest.raises(ValueError, match="bad"),
        provider.get_tracer("t").start_as_current_span("s"),
    ):
        raise ValueError("bad")
    (ended,) = recorded.ended
    assert ended.status.status_code is StatusCode.ERROR
    (event,) = ended.events
    assert event.name == "exception"
    assert (event.attributes or {})["exception.type"] == "ValueError"
    assert (event.attributes or {})["exception.message"] == "bad"


def test_an_ended_span_changes_no_more_and_ends_once() -> None:
    provider, recorded = _provider()
    span = provider.get_tracer("t").start_span("s")
    span.end()
    span.set_attribute("late", 1)
    span.add_event("late")
    span.update_name("renamed")
    span.end()
    assert len(recorded.ended) == 1
    assert recorded.ended[0].name == "s"
    assert not recorded.ended[0].attributes


def test_a_processor_added_later_receives_the_spans_of_tracers_made_before() -> None:
    provider, first = _provider()
    tracer = provider.get_tracer("early")
    tracer.start_span("one").end()
    second = Recorded()
    provider.add_span_processor(second)
    tracer.start_span("two").end()
    assert [span.name for span in first.ended] == ["one", "two"]
    assert [span.name for span in second.ended] == ["two"]
    assert [getattr(span, "name", None) for span in second.started] == ["two"]
