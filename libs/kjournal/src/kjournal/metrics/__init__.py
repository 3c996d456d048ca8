"""One small metrics seam for the whole library: counters, histograms and gauges with labels.

Library code records through `Metrics`; a service plugs in an exporter (Prometheus, OpenTelemetry)
that implements the same three methods. `NOOP_METRICS` is the default, so nothing needs wiring, and
`RecordingMetrics` keeps every value in memory for tests.

Names follow Prometheus conventions (`kjournal_replicator_events_total`, `..._seconds`); labels are small,
bounded sets of strings (topic, kind, result), never ids or offsets.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from typing import Protocol

LabelKey = tuple[tuple[str, str], ...]


class Metrics(Protocol):
    def increment(self, name: str, value: float = 1.0, /, **labels: str) -> None:
        """Add `value` (≥ 0) to a counter."""
        ...

    def observe(self, name: str, value: float, /, **labels: str) -> None:
        """Record one observation in a histogram (durations in seconds)."""
        ...

    def set(self, name: str, value: float, /, **labels: str) -> None:
        """Set a gauge."""
        ...


class NoopMetrics:
    """Discards everything."""

    def increment(self, name: str, value: float = 1.0, /, **labels: str) -> None:
        pass

    def observe(self, name: str, value: float, /, **labels: str) -> None:
        pass

    def set(self, name: str, value: float, /, **labels: str) -> None:
        pass


NOOP_METRICS: Metrics = NoopMetrics()


@contextmanager
def timed(metrics: Metrics, name: str, /, **labels: str) -> Iterator[None]:
    """Observe the wall time of the block, in seconds, whether it succeeds or raises."""
    start = time.perf_counter()
    try:
        yield
    finally:
        metrics.observe(name, time.perf_counter() - start, **labels)


def _key(labels: Mapping[str, str]) -> LabelKey:
    return tuple(sorted(labels.items()))


class RecordingMetrics:
    """Keeps every value in memory; thread-safe. For tests and benchmarks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: dict[str, dict[LabelKey, float]] = {}
        self.histograms: dict[str, dict[LabelKey, list[float]]] = {}
        self.gauges: dict[str, dict[LabelKey, float]] = {}

    def increment(self, name: str, value: float = 1.0, /, **labels: str) -> None:
        if value < 0:
            raise ValueError(f"counter {name} cannot decrease (got {value})")
        with self._lock:
            series = self.counters.setdefault(name, {})
            key = _key(labels)
            series[key] = series.get(key, 0.0) + value

    def observe(self, name: str, value: float, /, **labels: str) -> None:
        with self._lock:
            self.histograms.setdefault(name, {}).setdefault(_key(labels), []).append(value)

    def set(self, name: str, value: float, /, **labels: str) -> None:
        with self._lock:
            self.gauges.setdefault(name, {})[_key(labels)] = value

    def counter(self, name: str, /, **labels: str) -> float:
        """The counter's value for exactly these labels (0 if never incremented)."""
        with self._lock:
            return self.counters.get(name, {}).get(_key(labels), 0.0)

    def counter_total(self, name: str, /, **labels: str) -> float:
        """The sum over every series of the counter whose labels include these."""
        wanted = set(labels.items())
        with self._lock:
            return sum(
                value for key, value in self.counters.get(name, {}).items() if wanted.issubset(key)
            )

    def observations(self, name: str, /, **labels: str) -> list[float]:
        with self._lock:
            return list(self.histograms.get(name, {}).get(_key(labels), []))

    def gauge(self, name: str, /, **labels: str) -> float | None:
        with self._lock:
            return self.gauges.get(name, {}).get(_key(labels))
