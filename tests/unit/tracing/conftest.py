"""Spans recorded in memory: the process's tracer provider is the SDK's, with the services'
sampler (`LinkedSampling` around the default, parent-based always on) and the SDK's in-memory
exporter, installed once for the session (the OpenTelemetry API never replaces a global
provider)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kjournal.telemetry import LinkedSampling
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import DEFAULT_ON

_EXPORTER = InMemorySpanExporter()


def _install() -> None:
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return
    provider = TracerProvider(sampler=LinkedSampling(DEFAULT_ON), shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    assert trace.get_tracer_provider() is provider, "another test installed a tracer provider"


class Spans:
    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self._exporter = exporter

    def finished(self) -> list[ReadableSpan]:
        return list(self._exporter.get_finished_spans())

    def named(self, name: str) -> ReadableSpan:
        found = [span for span in self.finished() if span.name == name]
        assert len(found) == 1, [span.name for span in self.finished()]
        return found[0]


@pytest.fixture
def spans() -> Iterator[Spans]:
    _install()
    _EXPORTER.clear()
    yield Spans(_EXPORTER)
    _EXPORTER.clear()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
