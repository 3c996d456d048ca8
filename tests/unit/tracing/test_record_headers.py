"""The trace context in Kafka record headers: written from a span, read back; anything malformed
is no context (never an error)."""

from __future__ import annotations

import pytest
from kjournal.spans.record_headers import record_context
from kjournal.spans.record_headers import trace_headers
from opentelemetry.trace import INVALID_SPAN_CONTEXT
from opentelemetry.trace import SpanContext
from opentelemetry.trace import TraceFlags
from opentelemetry.trace import TraceState

CONTEXT = SpanContext(
    0x0AF7651916CD43DD8448EB211C80319C,
    0xB7AD6B7169203331,
    is_remote=False,
    trace_flags=TraceFlags(TraceFlags.SAMPLED),
    trace_state=TraceState([("vendor", "x1")]),
)


def test_a_context_round_trips_through_the_headers() -> None:
    headers = trace_headers(CONTEXT)
    assert headers == [
        ("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("tracestate", b"vendor=x1"),
    ]
    read = record_context([("journal.action", b"{}"), *headers])
    assert read is not None
    assert (read.trace_id, read.span_id, read.trace_flags) == (
        CONTEXT.trace_id,
        CONTEXT.span_id,
        CONTEXT.trace_flags,
    )
    assert read.is_remote
    assert read.trace_state == CONTEXT.trace_state


def test_no_tracestate_header_when_the_state_is_empty() -> None:
    plain = SpanContext(1, 2, is_remote=False)
    assert [name for name, _ in trace_headers(plain)] == ["traceparent"]
    assert trace_headers(INVALID_SPAN_CONTEXT) == []


@pytest.mark.parametrize(
    "value",
    [
        b"garbage",
        b"",
        b"00-00000000000000000000000000000000-b7ad6b7169203331-01",  # invalid trace id
        b"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",  # invalid span id
        b"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",  # forbidden version
        b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333é-01".encode(),
        b"\xff\xfe",
    ],
)
def test_a_malformed_traceparent_is_no_context(value: bytes) -> None:
    assert record_context([("traceparent", value)]) is None


def test_no_traceparent_is_no_context() -> None:
    assert record_context([("tracestate", b"a=b"), ("journal.action", b"{}")]) is None
    assert record_context([("traceparent", None)]) is None


def test_the_replicator_links_only_sampled_produce_spans() -> None:
    from kjournal.wire.record import ConsumedRecord
    from kjournal_replicator.slice_span import producer_links

    def record(offset: int, flags: str) -> ConsumedRecord:
        traceparent = f"00-{offset:032x}-{offset:016x}-{flags}".encode()
        return ConsumedRecord(
            topic="journal", partition=0, offset=offset, key=b"k", value=b"",
            timestamp_ms=1, headers=(("traceparent", traceparent),),
        )  # fmt: skip

    links = producer_links([record(1, "00"), record(2, "01"), record(3, "00"), record(4, "01")], 8)
    assert [link.context.span_id for link in links] == [2, 4]
    assert [link.attributes for link in links] == [
        {"messaging.kafka.offset": 2},
        {"messaging.kafka.offset": 4},
    ]
