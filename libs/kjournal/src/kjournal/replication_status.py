"""Reading how far replication of a topic has come, and publishing its lag as one metric.

The lag is `kjournal.model.replication.replication_lag` (its docstring defines it). The reader's
`/v1/topics/{topic}/replication` route and the replicator's lag monitor both measure it here and
publish it as `kjournal_replication_lag_records{topic,partition}`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import REPLICATION_LAG
from kjournal.model.replication import PartitionReplication
from kjournal.model.replication import TopicReplication

__all__ = [
    "REPLICATION_LAG_METRIC",
    "OffsetsSource",
    "Pointer2Source",
    "record_lag",
    "replication_status",
]

REPLICATION_LAG_METRIC = REPLICATION_LAG.name


class OffsetsSource(Protocol):
    async def offsets(self, topic: str, partitions: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(beginning, end) offset of each partition."""
        ...


class Pointer2Source(Protocol):
    async def pointer2(self, topic: str, partition: int) -> int | None: ...


async def replication_status(
    topic: str, partition_count: int, kafka: OffsetsSource, eventual: Pointer2Source
) -> TopicReplication:
    """Kafka's offsets and pointer2 of every partition of `topic`, read concurrently."""
    partitions = range(partition_count)
    offsets, pointers = await asyncio.gather(
        kafka.offsets(topic, partitions),
        asyncio.gather(*(eventual.pointer2(topic, p) for p in partitions)),
    )
    return TopicReplication(
        topic,
        tuple(
            PartitionReplication(p, offsets[p][0], offsets[p][1], pointer)
            for p, pointer in zip(partitions, pointers, strict=True)
        ),
    )


def record_lag(metrics: Metrics, status: TopicReplication) -> None:
    """Publish each partition's lag as `REPLICATION_LAG_METRIC`."""
    for partition in status.partitions:
        metrics.set(
            REPLICATION_LAG_METRIC,
            partition.lag,
            topic=status.topic,
            partition=str(partition.partition),
        )
