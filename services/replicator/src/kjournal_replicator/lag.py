"""Replication lag per partition, measured by the driver: Kafka's end offset against pointer2.

lag = end offset − (pointer2 + 1): the records Kafka holds that Cassandra does not (0 when
caught up). A partition without pointer2 counts from its beginning offset. Measured on a timer,
independently of micro-batches, so the lag keeps growing (and alerting) while batches fail.
"""

from __future__ import annotations

import logging
import threading

from kjournal.kafka.settings import KafkaSettings
from kjournal.metrics import Metrics

from kjournal_replicator.kafka_source import kafka_offsets, matching_partitions
from kjournal_replicator.metrics import END_OFFSET, LAG
from kjournal_replicator.offsets import Pointer2
from kjournal_replicator.settings import TopicSettings

__all__ = ["LagMonitor", "measure_lag"]

log = logging.getLogger(__name__)


def measure_lag(
    kafka: KafkaSettings, topics: TopicSettings, pointer2: Pointer2
) -> dict[tuple[str, int], tuple[int, int]]:
    """(end offset, lag) per matching partition."""
    offsets = kafka_offsets(kafka, matching_partitions(kafka, topics))
    measured = {}
    for (topic, partition), known in offsets.items():
        last = pointer2(topic, partition)
        start = known.beginning if last is None else last + 1
        measured[(topic, partition)] = (known.end, max(known.end - start, 0))
    return measured


class LagMonitor:
    def __init__(
        self,
        kafka: KafkaSettings,
        topics: TopicSettings,
        pointer2: Pointer2,
        metrics: Metrics,
        interval_s: float,
    ) -> None:
        self._kafka = kafka
        self._topics = topics
        self._pointer2 = pointer2
        self._metrics = metrics
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kjournal-lag", daemon=True)

    def start(self) -> LagMonitor:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._interval + 30)

    def measure_once(self) -> None:
        for (topic, partition), (end, lag) in measure_lag(
            self._kafka, self._topics, self._pointer2
        ).items():
            self._metrics.set(END_OFFSET, end, topic=topic, partition=str(partition))
            self._metrics.set(LAG, lag, topic=topic, partition=str(partition))

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.measure_once()
            except Exception as exc:  # a lag probe must never stop replication
                log.warning("measuring replication lag failed: %s", exc)
            self._stop.wait(self._interval)
