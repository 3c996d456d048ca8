"""`LeanBatchProcessor`: ended spans queued and exported in batches from one thread.

What the SDK's `BatchSpanProcessor` does, for less per span: ending a span appends it to a deque
(the SDK's `emit` also asks the kernel for the process id, checks a shutdown flag and an event,
and its multi-processor wraps the call twice more); the writer ends two spans per append. The
thread wakes once a batch is full or the schedule delay has passed, and exports the oldest spans
first. Settings are the standard `OTEL_BSP_*` variables with the SDK's defaults. A full queue
drops the oldest span and counts it (logged once per batch that follows, not once per span).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Mapping

from opentelemetry.context import (
    _SUPPRESS_INSTRUMENTATION_KEY,
    Context,
    attach,
    detach,
    set_value,
)
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.trace import TraceFlags

__all__ = ["BatchSettings", "LeanBatchProcessor"]

log = logging.getLogger(__name__)

_SAMPLED = int(TraceFlags.SAMPLED)


class BatchSettings:
    """The `OTEL_BSP_*` variables (a missing or invalid one: the SDK's default)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.schedule_delay_s = _positive(env, "OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000
        self.max_queue_size = _positive(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048)
        self.max_batch_size = min(
            self.max_queue_size, _positive(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)
        )


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        log.warning("%s=%s is not a positive integer: %d", name, text, default)
        return default
    return value


class LeanBatchProcessor(SpanProcessor):
    def __init__(self, exporter: SpanExporter, settings: BatchSettings | None = None) -> None:
        settings = settings or BatchSettings()
        self._exporter = exporter
        self._delay_s = settings.schedule_delay_s
        self._batch = settings.max_batch_size
        self._limit = settings.max_queue_size
        self._queue: deque[ReadableSpan] = deque(maxlen=self._limit)
        self._dropped = 0
        self._stopped = False
        self._export_lock = threading.Lock()
        self._start_worker()
        reference = weakref.WeakMethod(self._start_worker)

        def restart_in_child() -> None:
            start = reference()
            if start is not None:
                start()

        os.register_at_fork(after_in_child=restart_in_child)

    def _start_worker(self) -> None:
        """(Again in a forked child, where the parent's thread does not exist.)"""
        self._queue.clear()
        self._export_lock = threading.Lock()
        self._wake = threading.Event()
        self._awake = False  # set when a full batch woke the thread: one wake per batch
        self._worker = threading.Thread(target=self._work, name="kjournal-span-export", daemon=True)
        self._worker.start()

    def on_end(self, span: ReadableSpan) -> None:
        context = span._context  # a SpanContext tuple; [3]: its flags
        if context is None or not context[3] & _SAMPLED or self._stopped:
            return
        queue = self._queue
        if len(queue) >= self._batch:
            self._full(len(queue))
        queue.append(span)

    def _full(self, queued: int) -> None:
        """A batch is ready (and the queue may be full: the span appended next drops the oldest)."""
        if queued >= self._limit:
            self._dropped += 1
        if not self._awake:
            self._awake = True
            self._wake.set()

    def _work(self) -> None:
        while True:
            self._wake.wait(self._delay_s)
            self._wake.clear()
            self._awake = False
            if self._stopped:  # shut down: what is left goes in full
                self._export(everything=True)
                return
            self._export(everything=False)

    def _export(self, everything: bool) -> None:
        """A batch at least (when any span is queued), then more while full batches are queued;
        with `everything`, until the queue is empty."""
        with self._export_lock:
            queue = self._queue
            first = True
            while queue and (first or everything or len(queue) >= self._batch):
                first = False
                take = queue.popleft
                batch = [take() for _ in range(min(self._batch, len(queue)))]
                if self._dropped:
                    dropped, self._dropped = self._dropped, 0
                    log.warning("span queue full (%d spans): %d dropped", self._limit, dropped)
                token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True, Context()))
                try:
                    self._exporter.export(batch)
                except Exception:
                    log.exception("could not export %d spans", len(batch))
                finally:
                    detach(token)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        if self._stopped:
            return False
        self._export(everything=True)
        return True

    def shutdown(self, timeout_s: float = 30.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._wake.set()
        self._worker.join(timeout_s)
        self._exporter.shutdown()
