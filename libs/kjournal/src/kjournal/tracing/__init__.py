"""Spans of kjournal's own work, on the OpenTelemetry API alone.

Nothing here records by itself: spans are recorded once an OpenTelemetry SDK is the global tracer
provider (the services install one, `kjournal_service.tracing`; an application using the library
in process installs its own). Until then `recording()` is false and the hot paths skip their span
code entirely, so a process without tracing pays one boolean test per operation.

    conventions     the span names and attribute keys (OpenTelemetry semantic conventions)
    record_headers  the W3C trace context in Kafka record headers, both ways
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from importlib.metadata import PackageNotFoundError, version

from opentelemetry import trace
from opentelemetry.environment_variables import OTEL_PYTHON_TRACER_PROVIDER
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

__all__ = ["recording", "span", "tracer", "untraced"]

try:
    _VERSION: str | None = version("kjournal")
except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
    _VERSION = None

_tracer: trace.Tracer | None = None
_UNKNOWN = object()
# A provider named by the environment is loaded by the API on first use (read at import).
_PROVIDER_FROM_ENVIRONMENT = OTEL_PYTHON_TRACER_PROVIDER in os.environ
_NO_SPAN: AbstractContextManager[None] = nullcontext()
_untraced: ContextVar[bool] = ContextVar("kjournal_untraced", default=False)


def recording() -> bool:
    """Whether spans are recorded here: a tracer provider is installed (the API alone records
    nothing) and this is not background work (`untraced`)."""
    if _untraced.get():
        return False
    if _tracer is not None:
        return True
    return _install_tracer()


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
    if getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None and not _PROVIDER_FROM_ENVIRONMENT:
        # None set (the API's own first test, read here directly): `get_tracer_provider` would
        # also look the environment up on every call, a microsecond each time, twice an append.
        return False
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
    without a provider, nothing at all: the block gets None."""
    if not recording():
        return _NO_SPAN
    assert _tracer is not None
    return _tracer.start_as_current_span(name, kind=kind, attributes=attributes)
