"""The spans of the replicator: its micro-batch on the driver, and each Kafka partition's slice on
the executors, which link to the produce spans of the records they apply.

The micro-batch span's context goes to the executors as a W3C `traceparent` in the task
(`ApplyTask.trace_parent`), so each slice span is its child although it runs in another process.
Links (not parents: a slice applies records of many traces) go to the producers' spans, read from
the records' `traceparent` headers; a malformed header is no link, never an error.

Both follow the sampled flag of the records: only a sampled produce span is linked (one not
sampled was never exported), and a slice with a sampled record is sampled (`LinkedSampling` in
kjournal.telemetry), as a root of its own when its micro-batch was not sampled, so that a sampled
append's replication is kept whatever the micro-batch's own decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import nullcontext

from kjournal.spans import conventions as sem
from kjournal.spans import recording
from kjournal.spans import tracer
from kjournal.spans.record_headers import TRACEPARENT
from kjournal.spans.record_headers import record_context
from kjournal.telemetry import TracingSetup
from kjournal.telemetry import configure_tracing
from kjournal.wire.record import ConsumedRecord
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link
from opentelemetry.trace import Span
from opentelemetry.trace import SpanKind

__all__ = ["slice_span", "task_parent", "worker_tracing"]

SERVICE = "kjournal-replicator"
_NO_SPAN: AbstractContextManager[None] = nullcontext()
_setup: TracingSetup | None = None


def worker_tracing() -> None:
    """Set up tracing in this Python worker, once (from the `OTEL_*` variables it inherits)."""
    global _setup
    if _setup is None:
        _setup = configure_tracing(SERVICE)


def task_parent() -> str | None:
    """The current span's context as a traceparent, to pass with a task (None if none)."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags & 0xFF:02x}"


def producer_links(records: Sequence[ConsumedRecord], limit: int) -> list[Link]:
    """Links to the sampled produce spans of the first `limit` records that carry one."""
    links: list[Link] = []
    for record in records:
        if len(links) >= limit:
            break
        if any(name == TRACEPARENT for name, _ in record.headers):
            context = record_context(record.headers)
            if context is not None and context.trace_flags.sampled:
                links.append(Link(context, {sem.MESSAGING_KAFKA_OFFSET: record.offset}))
    return links


def slice_span(
    topic: str,
    partition: int,
    records: Sequence[ConsumedRecord],
    parent: str | None,
    max_links: int,
) -> AbstractContextManager[Span | None]:
    """The CONSUMER span of applying one partition's records, current while they are applied."""
    if not recording():
        return _NO_SPAN
    batch = None if parent is None else record_context([(TRACEPARENT, parent.encode("ascii"))])
    links = producer_links(records, max_links)
    if batch is not None and (batch.trace_flags.sampled or not links):
        context = trace.set_span_in_context(trace.NonRecordingSpan(batch))
    else:  # no micro-batch to follow, or one not sampled while a record is: a trace of its own
        context = Context()
    return tracer().start_as_current_span(
        sem.process_span(topic),
        context=context,
        kind=SpanKind.CONSUMER,
        links=links,
        attributes={
            sem.MESSAGING_SYSTEM: sem.KAFKA,
            sem.MESSAGING_OPERATION_TYPE: "process",
            sem.MESSAGING_OPERATION_NAME: "process",
            sem.MESSAGING_DESTINATION: topic,
            sem.MESSAGING_PARTITION: str(partition),
            sem.MESSAGING_BATCH_COUNT: len(records),
            sem.OFFSET_FIRST: records[0].offset if records else -1,
            sem.OFFSET_LAST: records[-1].offset if records else -1,
        },
    )
