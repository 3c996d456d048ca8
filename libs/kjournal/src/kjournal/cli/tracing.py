"""`kjournal --trace`: run one command as one trace and say which.

With the OpenTelemetry SDK installed (`pip install 'kjournal[tracing]'`; the workspace has it) the
command is a root span `kjournal <command>`, always sampled, set up as the services set theirs up
(`kjournal.telemetry`: OTLP/HTTP as the standard variables say, `OTEL_EXPORTER_OTLP_ENDPOINT`,
default http://localhost:4318; `kjournal-dev up` runs a collector there) and flushed before the
command returns. With `OTEL_SDK_DISABLED=true` it is as without the SDK. Without the SDK the command's requests still carry
one fresh sampled trace context, so the services' spans form that trace. Either way the trace id
is printed on stderr.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan
from opentelemetry.trace import SpanContext
from opentelemetry.trace import SpanKind
from opentelemetry.trace import TraceFlags

from kjournal.spans import conventions as sem

__all__ = ["traced"]


@contextmanager
def traced(command: str) -> Iterator[str]:
    """The command's trace id; its requests carry the trace while the block runs."""
    try:
        from kjournal.telemetry import configure_tracing
    except ImportError:  # no `tracing` extra
        setup = None
    else:  # asked for a trace: sampled whatever OTEL_TRACES_SAMPLER says
        setup = configure_tracing("kjournal-cli", sample_everything=True)
    if setup is None:
        with _context_only() as trace_id:
            yield trace_id
        return
    tracer = setup.provider.get_tracer("kjournal.cli")
    try:
        with tracer.start_as_current_span(sem.cli_span(command), kind=SpanKind.CLIENT) as span:
            trace_id = f"{span.get_span_context().trace_id:032x}"
            try:
                yield trace_id
            finally:
                sys.stderr.write(f"trace {trace_id}\n")
    finally:
        setup.flush()


@contextmanager
def _context_only() -> Iterator[str]:
    trace_id = secrets.randbits(128) or 1
    parent = SpanContext(
        trace_id, secrets.randbits(64) or 1, is_remote=False, trace_flags=TraceFlags(1)
    )
    token = context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    try:
        yield f"{trace_id:032x}"
    finally:
        context.detach(token)
        sys.stderr.write(f"trace {trace_id:032x}\n")
