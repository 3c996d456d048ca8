"""The lean batch processor: spans reach the exporter in batches, oldest first; a full queue drops
the oldest and says so; flush and shutdown export what is queued; OTEL_BSP_* are read as the SDK
reads them."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import pytest
from kjournal_service.tracing.batch import BatchSettings, LeanBatchProcessor
from kjournal_service.tracing.lean import LeanTracerProvider
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    TraceFlags,
    Tracer,
    set_span_in_context,
)


class Recording(SpanExporter):
    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.exported = threading.Event()
        self.shut_down = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append([span.name for span in spans])
        self.exported.set()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.shut_down = True


def _settings(**env: str) -> BatchSettings:
    return BatchSettings({"OTEL_BSP_SCHEDULE_DELAY": "60000", **env})


def _processor(exporter: Recording, settings: BatchSettings) -> tuple[LeanBatchProcessor, Tracer]:
    processor = LeanBatchProcessor(exporter, settings)
    provider = LeanTracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    return processor, provider.get_tracer("test")


def _end(tracer: Tracer, *names: str) -> None:
    for name in names:
        tracer.start_span(name).end()


def test_a_full_batch_is_exported_at_once_oldest_first() -> None:
    exporter = Recording()
    processor, tracer = _processor(exporter, _settings(OTEL_BSP_MAX_EXPORT_BATCH_SIZE="3"))
    _end(tracer, "a", "b", "c", "d")  # the fourth finds a full batch queued: the thread is woken
    assert exporter.exported.wait(10)
    processor.force_flush()
    assert exporter.batches[0] == ["a", "b", "c"]
    assert [name for batch in exporter.batches for name in batch] == ["a", "b", "c", "d"]
    processor.shutdown()


def test_flush_and_shutdown_export_everything_queued() -> None:
    exporter = Recording()
    processor, tracer = _processor(exporter, _settings(OTEL_BSP_MAX_EXPORT_BATCH_SIZE="2"))
    _end(tracer, "a")
    assert processor.force_flush()
    assert exporter.batches == [["a"]]
    _end(tracer, "b")
    processor.shutdown()
    assert exporter.batches == [["a"], ["b"]]
    assert exporter.shut_down
    _end(tracer, "after")  # ignored once shut down
    assert not processor.force_flush()
    assert exporter.batches == [["a"], ["b"]]


def test_a_full_queue_drops_the_oldest_and_says_how_many(caplog: pytest.LogCaptureFixture) -> None:
    exporter = Recording()
    settings = _settings(OTEL_BSP_MAX_QUEUE_SIZE="2", OTEL_BSP_MAX_EXPORT_BATCH_SIZE="2")
    processor, tracer = _processor(exporter, settings)
    processor._export_lock.acquire()  # the thread cannot take the queue meanwhile
    try:
        _end(tracer, "a", "b", "c", "d")
    finally:
        processor._export_lock.release()
    with caplog.at_level(logging.WARNING, "kjournal_service.tracing.batch"):
        processor.force_flush()
    assert [name for batch in exporter.batches for name in batch][-2:] == ["c", "d"]
    assert "2 dropped" in caplog.text
    processor.shutdown()


def test_unsampled_spans_are_not_exported() -> None:
    exporter = Recording()
    processor, tracer = _processor(exporter, _settings())
    unsampled = SpanContext(1, 2, is_remote=True, trace_flags=TraceFlags(0))
    tracer.start_span("child", context=set_span_in_context(NonRecordingSpan(unsampled))).end()
    _end(tracer, "sampled")
    processor.force_flush()
    assert exporter.batches == [["sampled"]]
    processor.shutdown()


def test_settings_are_the_sdks_variables_with_its_defaults() -> None:
    default = BatchSettings({})
    assert (default.schedule_delay_s, default.max_queue_size, default.max_batch_size) == (
        5.0,
        2048,
        512,
    )
    chosen = BatchSettings(
        {
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            "OTEL_BSP_MAX_QUEUE_SIZE": "100",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "500",  # never more than the queue holds
        }
    )
    assert (chosen.schedule_delay_s, chosen.max_queue_size, chosen.max_batch_size) == (
        0.2,
        100,
        100,
    )
    assert BatchSettings({"OTEL_BSP_MAX_QUEUE_SIZE": "-3"}).max_queue_size == 2048
