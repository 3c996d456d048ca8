"""Replication lag per partition, measured by the driver on a timer.

The lag is the core's (`kjournal.model.replication.replication_lag`: records Kafka holds that
Cassandra does not) under the core's metric name (`kjournal_replication_lag_records`), the same
the reader's replication route reports. Measured independently of micro-batches, so the lag keeps
growing (and alerting) while batches fail. Each measurement also tells the Backlog, which logs
once when records wait longer than BACKLOG_PATIENCE measurements and once when none do any more.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from kjournal.kafka.settings import KafkaSettings
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import REPLICATOR_END_OFFSET
from kjournal.model.replication import PartitionReplication
from kjournal.model.replication import TopicReplication
from kjournal.replication_status import record_lag
from kjournal.spans import untraced

from kjournal_replicator.backlog import Backlog
from kjournal_replicator.kafka_source import kafka_offsets
from kjournal_replicator.kafka_source import matching_partitions
from kjournal_replicator.offsets import Pointer2
from kjournal_replicator.settings import TopicSettings
from kjournal_replicator.topic_watch import TopicWatch

__all__ = ["LagMonitor", "measure_lag"]

log = logging.getLogger(__name__)

BACKLOG_PATIENCE = 3
"""Measurements a record may wait for Cassandra before the replicator says it is behind."""


def measure_lag(
    kafka: KafkaSettings, topics: TopicSettings, pointer2: Pointer2
) -> list[TopicReplication]:
    """The replication status of every partition of every matching topic (a topic deleted while
    it is measured is left out)."""
    partitions = matching_partitions(kafka, topics)
    offsets = kafka_offsets(kafka, partitions)
    partitions = {
        topic: numbers
        for topic, numbers in partitions.items()
        if all((topic, partition) in offsets for partition in numbers)
    }
    return [
        TopicReplication(
            topic,
            tuple(
                PartitionReplication(
                    partition,
                    offsets[(topic, partition)].beginning,
                    offsets[(topic, partition)].end,
                    pointer2(topic, partition),
                )
                for partition in numbers
            ),
        )
        for topic, numbers in sorted(partitions.items())
    ]


@dataclass(eq=False)
class LagMonitor:
    kafka: KafkaSettings
    topics: TopicSettings
    pointer2: Pointer2
    metrics: Metrics
    interval_s: float
    watch: TopicWatch

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kjournal-lag", daemon=True)
        self._backlog = Backlog(BACKLOG_PATIENCE, self.interval_s)

    def start(self) -> LagMonitor:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 30)

    def measure_once(self) -> None:
        statuses = measure_lag(self.kafka, self.topics, self.pointer2)
        self.watch.now(status.topic for status in statuses)
        if news := self._backlog.observe(statuses, time.monotonic()):
            log.log(news.level, news.message)
        for status in statuses:
            record_lag(self.metrics, status)
            for partition in status.partitions:
                self.metrics.set(
                    REPLICATOR_END_OFFSET.name,
                    partition.end_offset,
                    topic=status.topic,
                    partition=str(partition.partition),
                )

    def _loop(self) -> None:
        with untraced():  # a measurement every few seconds is not worth a trace each
            self._measure_until_stopped()

    def _measure_until_stopped(self) -> None:
        while not self._stop.is_set():
            try:
                self.measure_once()
            except Exception as exc:  # a lag probe must never stop replication
                log.warning("measuring replication lag failed: %s", exc)
            self._stop.wait(self.interval_s)
