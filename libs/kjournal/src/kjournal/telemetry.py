"""`configure_tracing(service)`: the stock OpenTelemetry SDK of a kjournal process, set up in one
place for the services and for the CLI's `--trace`.

The only module of the core that imports the SDK; it needs the `tracing` extra
(`pip install 'kjournal[tracing]'`: opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http),
which the services always have. The span code itself (`kjournal.spans`, and the spans made where
the work is) stands on the OpenTelemetry API alone.

Everything is the SDK's and configured by the standard variables, as in any OpenTelemetry
process: the `TracerProvider` with its sampler (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`;
the SDK's default is `parentbased_always_on`) and span limits (`OTEL_SPAN_*`, `OTEL_ATTRIBUTE_*`),
the resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), the `BatchSpanProcessor`
(`OTEL_BSP_*`) and the OTLP/HTTP exporter (`OTEL_EXPORTER_OTLP_*`). `OTEL_SDK_DISABLED=true` or
`OTEL_TRACES_EXPORTER=none` installs nothing, and kjournal's span code is then skipped.

One rule is added to the configured sampler (`LinkedSampling`): a span that links to a sampled
span is sampled, so the replicator's work on a sampled append is kept whatever the sampler decided
for its micro-batch.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME
from opentelemetry.sdk.resources import SERVICE_VERSION
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.sdk.trace.sampling import Decision
from opentelemetry.sdk.trace.sampling import Sampler
from opentelemetry.sdk.trace.sampling import SamplingResult
from opentelemetry.trace import Link
from opentelemetry.trace import SpanKind
from opentelemetry.trace import get_current_span
from opentelemetry.util.types import Attributes

__all__ = ["LinkedSampling", "TracingSetup", "configure_tracing", "tracing_disabled"]

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


def configure_tracing(
    service: str, exporter: SpanExporter | None = None, *, sample_everything: bool = False
) -> TracingSetup | None:
    """Install the SDK as this process's tracer provider (once; later calls return the first
    setup); None when tracing is disabled. `service` is the default service.name (and the
    distribution whose version is service.version); `exporter` replaces the one the variables
    choose; `sample_everything` replaces the variables' sampler by `always_on` (the CLI's
    `--trace`: asked for, always sampled)."""
    global _installed
    if _installed is not None:
        return _installed
    if tracing_disabled() and exporter is None:
        return None
    chosen, description = (exporter, type(exporter).__name__) if exporter else _exporter(os.environ)
    if chosen is None:
        return None
    provider = TracerProvider(
        resource=_resource(service),
        sampler=LinkedSampling(ALWAYS_ON if sample_everything else _configured_sampler()),
    )
    provider.add_span_processor(BatchSpanProcessor(chosen))
    trace.set_tracer_provider(provider)
    _installed = TracingSetup(provider, description)
    return _installed


class LinkedSampling(Sampler):
    """The configured sampler, and one rule more: a span with a link to a sampled span is
    sampled (the replicator's slice span, linked to the produce spans of the records it applies:
    a sampled append's replication is kept)."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: trace.TraceState | None = None,
    ) -> SamplingResult:
        result = self.sampler.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )
        if result.decision.is_sampled() or not links:  # type: ignore[no-untyped-call]
            return result
        if any(link.context.trace_flags.sampled for link in links):
            state = get_current_span(parent_context).get_span_context().trace_state
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, state)
        return result

    def get_description(self) -> str:
        return f"LinkedSampling{{{self.sampler.get_description()}}}"


def _configured_sampler() -> Sampler:
    """The sampler `OTEL_TRACES_SAMPLER` and `_ARG` name, as the SDK reads them (the SDK
    reads them for a provider made without one; it offers no public function of its own)."""
    return TracerProvider(shutdown_on_exit=False).sampler


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
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(), f"otlp http/protobuf to {_traces_endpoint(env)}"


def _traces_endpoint(env: Mapping[str, str]) -> str:
    """Where the OTLP/HTTP exporter sends, as the specification says (for the start-up log)."""
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if endpoint:
        return endpoint
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318"
    return f"{base.rstrip('/')}/v1/traces"


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
