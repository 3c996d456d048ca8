"""`Metrics` on prometheus-client: each name becomes a Counter, Histogram or Gauge on first use.

A metric of kjournal's catalogue (kjournal/metrics/catalogue.py) takes its kind, help and label
names from its declaration; any other name, from its first call (Prometheus requires one label
set per name). A call with other labels, or as another kind, is logged once and dropped rather
than failing the operation that recorded it.

    metrics = PrometheusMetrics()
    body, content_type = metrics.exposition()   # for GET /metrics
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from kjournal.metrics.catalogue import Kind
from kjournal.metrics.catalogue import declared
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client import CollectorRegistry
from prometheus_client import Counter
from prometheus_client import Gauge
from prometheus_client import Histogram
from prometheus_client import generate_latest
from prometheus_client.metrics import MetricWrapperBase

__all__ = ["DEFAULT_BUCKETS", "PrometheusMetrics"]

log = logging.getLogger(__name__)

# Seconds, from a cached answer (sub-millisecond) to a slow Kafka scan.
DEFAULT_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)


_KINDS: dict[Kind, type[MetricWrapperBase]] = {
    Kind.COUNTER: Counter,
    Kind.HISTOGRAM: Histogram,
    Kind.GAUGE: Gauge,
}


class PrometheusMetrics:
    """Implements kjournal.metrics.Metrics; thread-safe."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        buckets: Sequence[float] = DEFAULT_BUCKETS,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._buckets = tuple(buckets)
        self._lock = threading.Lock()
        self._metrics: dict[str, tuple[type[MetricWrapperBase], tuple[str, ...], MetricWrapperBase]]
        self._metrics = {}
        self._refused: set[tuple[str, type[MetricWrapperBase], tuple[str, ...]]] = set()
        self._children: dict[tuple[Any, ...], Any] = {}

    def increment(self, name: str, value: float = 1.0, /, **labels: str) -> None:
        series = self._series(Counter, name, labels)
        if series is not None:
            series.inc(value)

    def observe(self, name: str, value: float, /, **labels: str) -> None:
        series = self._series(Histogram, name, labels)
        if series is not None:
            series.observe(value)

    def set(self, name: str, value: float, /, **labels: str) -> None:
        series = self._series(Gauge, name, labels)
        if series is not None:
            series.set(value)

    def exposition(self) -> tuple[bytes, str]:
        """The text exposition format and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def _series(self, kind: type[MetricWrapperBase], name: str, labels: dict[str, str]) -> Any:
        """The labelled child (cached: prometheus-client's `labels()` is slow on hot paths)."""
        key = (kind, name, *labels.items())
        series = self._children.get(key)
        if series is None:
            metric = self._metric(kind, name, labels)
            if metric is None:
                return None
            series = metric.labels(**labels) if labels else metric
            self._children[key] = series
        return series

    def _metric(
        self, kind: type[MetricWrapperBase], name: str, labels: dict[str, str]
    ) -> MetricWrapperBase | None:
        names = tuple(sorted(labels))
        known = self._metrics.get(name)
        if known is not None and known[0] is kind and known[1] == names:
            return known[2]
        with self._lock:
            known = self._metrics.get(name)
            if known is None:
                spec = declared(name)
                expected = (
                    (kind, names)
                    if spec is None
                    else (_KINDS[spec.kind], tuple(sorted(spec.labels)))
                )
                if expected == (kind, names):
                    help_text = name.replace("_", " ") if spec is None else spec.help
                    metric = self._create(kind, name, names, help_text)
                    self._metrics[name] = (kind, names, metric)
                    return metric
            else:
                if known[0] is kind and known[1] == names:
                    return known[2]
                expected = (known[0], known[1])
            if (name, kind, names) not in self._refused:
                self._refused.add((name, kind, names))
                log.warning(
                    "metric %s is a %s with labels %s; dropping a %s with labels %s",
                    name,
                    expected[0].__name__,
                    expected[1],
                    kind.__name__,
                    names,
                )
            return None

    def _create(
        self,
        kind: type[MetricWrapperBase],
        name: str,
        labels: tuple[str, ...],
        documentation: str,
    ) -> MetricWrapperBase:
        if kind is Histogram:
            return Histogram(
                name, documentation, labels, registry=self.registry, buckets=self._buckets
            )
        return kind(name, documentation, labels, registry=self.registry)
