"""Metrics of the replicator: Prometheus in the driver, snapshots from the executors.

Executors run in other processes, so they record into a `RecordingMetrics` per slice and ship a
`MetricsSnapshot` back with the slice's report; the driver replays it into the core's
`PrometheusMetrics`, which the HTTP endpoint exposes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kjournal.metrics import LabelKey
from kjournal.metrics import Metrics
from kjournal.metrics import RecordingMetrics
from kjournal_service.metrics_prometheus import PrometheusMetrics

__all__ = [
    "MetricsSnapshot",
    "driver_metrics",
]

# Seconds: slices take milliseconds to seconds, latency grows to minutes while the job is behind.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900)


def driver_metrics() -> PrometheusMetrics:
    return PrometheusMetrics(buckets=BUCKETS)


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """What a RecordingMetrics held, as plain picklable data."""

    counters: tuple[tuple[str, LabelKey, float], ...] = ()
    histograms: tuple[tuple[str, LabelKey, tuple[float, ...]], ...] = ()
    gauges: tuple[tuple[str, LabelKey, float], ...] = ()

    @classmethod
    def of(cls, recorded: RecordingMetrics) -> MetricsSnapshot:
        return cls(
            counters=tuple(
                (name, labels, value)
                for name, series in recorded.counters.items()
                for labels, value in series.items()
            ),
            histograms=tuple(
                (name, labels, tuple(values))
                for name, series in recorded.histograms.items()
                for labels, values in series.items()
            ),
            gauges=tuple(
                (name, labels, value)
                for name, series in recorded.gauges.items()
                for labels, value in series.items()
            ),
        )

    def replay(self, metrics: Metrics) -> None:
        for name, labels, value in self.counters:
            metrics.increment(name, value, **dict(labels))
        for name, labels, values in self.histograms:
            for value in values:
                metrics.observe(name, value, **dict(labels))
        for name, labels, value in self.gauges:
            metrics.set(name, value, **dict(labels))
