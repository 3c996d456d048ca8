"""The W3C trace context in Kafka record headers: `traceparent` (and `tracestate` when not empty)
of the span that produced the record.

Written by the producer, read by the replicator to link its spans to the producer's. A header that
is malformed (another producer, a corrupted record) is no context: the record is applied as any
other, its span simply has no link.
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.trace import INVALID_SPAN_CONTEXT
from opentelemetry.trace import SpanContext
from opentelemetry.trace import get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

__all__ = ["TRACEPARENT", "TRACESTATE", "record_context", "trace_headers"]

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"

_W3C = TraceContextTextMapPropagator()


def trace_headers(context: SpanContext) -> list[tuple[str, bytes]]:
    """The headers that carry `context` (none for an invalid one)."""
    trace_id, span_id, _, flags, state, valid = context  # a tuple: unpacked, not by property
    if not valid:
        return []
    headers = [(TRACEPARENT, b"00-%032x-%016x-%02x" % (trace_id, span_id, flags & 0xFF))]
    if state:
        headers.append((TRACESTATE, state.to_header().encode("ascii")))
    return headers


def record_context(headers: Iterable[tuple[str, bytes | bytearray | None]]) -> SpanContext | None:
    """The span context a record's headers carry, or None (none, or malformed)."""
    carrier: dict[str, str] = {}
    for name, value in headers:
        if name in (TRACEPARENT, TRACESTATE) and value is not None:
            try:
                carrier[name] = bytes(value).decode("ascii")
            except UnicodeDecodeError:
                return None
    if TRACEPARENT not in carrier:
        return None
    context = get_current_span(_W3C.extract(carrier)).get_span_context()
    return context if context is not INVALID_SPAN_CONTEXT and context.is_valid else None
