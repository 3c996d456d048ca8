"""`configure_tracing(service)`: the OpenTelemetry SDK of a kjournal process, in one place.

Configured by the standard variables, as any OpenTelemetry SDK:

* `OTEL_SDK_DISABLED=true`: nothing is installed; kjournal's span code is skipped altogether.
* `OTEL_TRACES_EXPORTER`: `otlp` (default), `console` (JSON on stdout) or `none`.
* `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `_HEADERS`,
  `_TIMEOUT`, `_COMPRESSION`: where and how spans go (default http://localhost:4318).
  `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (default); `grpc` needs the package
  opentelemetry-exporter-otlp-proto-grpc, which the services do not ship.
* `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`: the resource (default service.name
  `kjournal-writer`, `kjournal-reader`, `kjournal-replicator`).
* `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`: sampling (default parentbased_always_on).
* `OTEL_BSP_SCHEDULE_DELAY`, `_MAX_QUEUE_SIZE`, `_MAX_EXPORT_BATCH_SIZE`: the batch processor's
  delay, queue and batch size (`batch.LeanBatchProcessor`, a leaner one than the SDK's).

Spans are made by `lean.LeanTracerProvider` (the SDK's provider, sampler and processors, with a
lighter span object) and sent by `exporter.OtlpHttpSpanExporter` from `batch.LeanBatchProcessor`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter

from kjournal_service.tracing.batch import LeanBatchProcessor
from kjournal_service.tracing.exporter import OtlpHttpSpanExporter
from kjournal_service.tracing.lean import LeanTracerProvider

__all__ = ["TracingSetup", "configure_tracing", "tracing_disabled"]

log = logging.getLogger(__name__)

_installed: TracingSetup | None = None


@dataclass(frozen=True)
class TracingSetup:
    provider: TracerProvider
    exporter: str  # what and where, for the start-up log line

    def flush(self, timeout_s: float = 5.0) -> bool:
        return self.provider.force_flush(int(timeout_s * 1000))


def tracing_disabled(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true" or (
        env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none"
    )


def configure_tracing(service: str, exporter: SpanExporter | None = None) -> TracingSetup | None:
    """Install the SDK as this process's tracer provider (once; later calls return the first
    setup); None when tracing is disabled. `service` is the default service.name (and the
    distribution whose version is service.version); `exporter` replaces the one the variables
    choose."""
    global _installed
    if _installed is not None:
        return _installed
    if tracing_disabled() and exporter is None:
        return None
    chosen, description = (exporter, type(exporter).__name__) if exporter else _exporter(os.environ)
    if chosen is None:
        return None
    provider = LeanTracerProvider(resource=_resource(service))
    provider.add_span_processor(LeanBatchProcessor(chosen))
    trace.set_tracer_provider(provider)
    _installed = TracingSetup(provider, description)
    return _installed


def _exporter(env: Mapping[str, str]) -> tuple[SpanExporter | None, str]:
    kind = env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if kind == "console":
        return ConsoleSpanExporter(), "console"
    if kind != "otlp":
        log.error(
            "OTEL_TRACES_EXPORTER=%s is not supported (otlp, console, none): no tracing", kind
        )
        return None, kind
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter as GrpcSpanExporter,
            )
        except ImportError:
            log.error(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs opentelemetry-exporter-otlp-proto-grpc, "
                "which is not installed: no tracing (http/protobuf needs nothing more)"
            )
            return None, protocol
        grpc: SpanExporter = GrpcSpanExporter()
        return grpc, "otlp grpc"
    if protocol != "http/protobuf":
        log.error("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not supported: no tracing", protocol)
        return None, protocol
    http = OtlpHttpSpanExporter()
    return http, f"otlp http/protobuf to {http.endpoint}"


def _resource(service: str) -> Resource:
    """The variables' resource; service.name `service` unless they name one."""
    detected = Resource.create()
    attributes = dict(detected.attributes)
    if str(attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        attributes[SERVICE_NAME] = service
    if SERVICE_VERSION not in attributes:
        with contextlib.suppress(PackageNotFoundError):
            attributes[SERVICE_VERSION] = version(service)
    return Resource(attributes, detected.schema_url)
