"""Spans of kjournal's own work, on the OpenTelemetry API alone.

Nothing here records by itself: spans are recorded once an OpenTelemetry SDK is the global tracer
provider (the services and the CLI's `--trace` install one, `kjournal.telemetry`; an application
using the library in process installs its own). Until then `recording()` is false and the hot
paths skip their span code entirely, so a process without tracing pays one boolean test per
operation. Under a current span that is not sampled it is false too: its children would not be
sampled by a parent-based sampler either, so they are not made at all.

    conventions     the span names and attribute keys (OpenTelemetry semantic conventions)
    record_headers  the W3C trace context in Kafka record headers, both ways
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import nullcontext
from contextvars import ContextVar
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN
from opentelemetry.trace import Span
from opentelemetry.trace import SpanKind
from opentelemetry.trace import get_current_span
from opentelemetry.util.types import AttributeValue

__all__ = ["installed", "recording", "span", "tracer", "untraced"]

try:
    _VERSION: str | None = version("kjournal")
except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
    _VERSION = None

_tracer: trace.Tracer | None = None
# The SDK records nothing when disabled (its provider hands out no-op tracers): not looked for.
_DISABLED = os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
_NO_SPAN: AbstractContextManager[None] = nullcontext()
_untraced: ContextVar[bool] = ContextVar("kjournal_untraced", default=False)


def installed() -> bool:
    """Whether spans may be recorded here: a tracer provider is installed (the API alone records
    nothing) and this is not background work (`untraced`)."""
    if _untraced.get():
        return False
    if _tracer is not None:
        return True
    return not _DISABLED and _install_tracer()


def recording() -> bool:
    """Whether kjournal's spans are made here: `installed()`, and the current span, if there
    is one, is sampled (a remote parent, extracted from a carrier, by its flags: it records
    nothing here, but its trace does)."""
    if not installed():
        return False
    current = get_current_span()
    if current is INVALID_SPAN or current.is_recording():
        return True
    parent = current.get_span_context()
    return parent.is_remote and parent.trace_flags.sampled


@contextmanager
def untraced() -> Iterator[None]:
    """No kjournal spans in the block, nor in the tasks started in it: background work (the
    tail cache following a topic) is not part of the request that happened to start it."""
    token = _untraced.set(True)
    try:
        yield
    finally:
        _untraced.reset(token)


def tracer() -> trace.Tracer:
    """The library's tracer (a no-op one until a provider is installed)."""
    if _tracer is not None or _install_tracer():
        assert _tracer is not None
        return _tracer
    return trace.NoOpTracer()


def _install_tracer() -> bool:
    global _tracer
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return False
    # A global provider, once set, is never replaced (the API refuses it): keep its tracer.
    _tracer = provider.get_tracer("kjournal", _VERSION)
    return True


def span(
    name: str,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Mapping[str, AttributeValue] | None = None,
) -> AbstractContextManager[Span | None]:
    """A span current while the block runs (an exception escaping it is recorded on it), or,
    without a provider or under a span not sampled, nothing at all: the block gets None."""
    if not recording():
        return _NO_SPAN
    assert _tracer is not None
    return _tracer.start_as_current_span(name, kind=kind, attributes=attributes)
