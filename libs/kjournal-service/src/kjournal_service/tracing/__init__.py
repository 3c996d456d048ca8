"""Tracing of the services: the OpenTelemetry SDK set up from the standard `OTEL_*` variables
(`setup`), a lighter span object for it (`lean`), a faster OTLP encoder (`otlp_encoding`,
`exporter`) and the HTTP server spans (`server`). The spans themselves are made where the work
is: kjournal.tracing lists them; docs/observability.md describes them all."""

from kjournal_service.tracing.server import ServerSpans
from kjournal_service.tracing.setup import TracingSetup, configure_tracing, tracing_disabled

__all__ = ["ServerSpans", "TracingSetup", "configure_tracing", "tracing_disabled"]
