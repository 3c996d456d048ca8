"""The replicator's slice span follows the sampled flag of its micro-batch and of its records:
sampled with its micro-batch, or, when the micro-batch was not, as a root of its own if a record
it applies was sampled (linked to that record's produce span only)."""

from __future__ import annotations

from kjournal.wire.record import ConsumedRecord
from kjournal_replicator.slice_span import slice_span
from opentelemetry.trace import SpanKind

from tests.unit.tracing.conftest import Spans

BATCH = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-"


def _record(offset: int, sampled: bool) -> ConsumedRecord:
    traceparent = f"00-{offset:032x}-{offset:016x}-{'01' if sampled else '00'}".encode()
    return ConsumedRecord("journal", 0, offset, b"k", b"", [("traceparent", traceparent)], 1)


def _apply(parent: str, records: list[ConsumedRecord]) -> None:
    with slice_span("journal", 0, records, parent, max_links=8):
        pass


def test_a_sampled_micro_batch_keeps_its_slices_linked_to_sampled_records(spans: Spans) -> None:
    _apply(BATCH + "01", [_record(1, False), _record(2, True)])
    span = spans.named("process journal")
    assert span.kind is SpanKind.CONSUMER
    assert span.parent is not None
    assert f"{span.parent.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert [link.context.span_id for link in span.links] == [2]


def test_a_sampled_record_keeps_its_slice_when_the_micro_batch_was_not_sampled(
    spans: Spans,
) -> None:
    _apply(BATCH + "00", [_record(1, False), _record(2, True)])
    span = spans.named("process journal")
    assert span.parent is None  # a trace of its own: its micro-batch was never exported
    assert [link.context.span_id for link in span.links] == [2]


def test_nothing_sampled_makes_no_slice_span(spans: Spans) -> None:
    _apply(BATCH + "00", [_record(1, False), _record(3, False)])
    assert spans.finished() == []
