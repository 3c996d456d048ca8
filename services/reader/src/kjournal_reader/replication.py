"""Replication progress of a topic: per partition, the end offset, pointer2 and the lag."""

from __future__ import annotations

import asyncio

from kjournal.api.schemas import PartitionReplicationOut, ReplicationOut
from kjournal.kafka.head import KafkaHead
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics
from kjournal.ports import EventualReader


def lag(end_offset: int, pointer2: int | None) -> int:
    """Records of a partition not yet replicated (pointer2 is the last replicated offset)."""
    replicated = -1 if pointer2 is None else pointer2
    return max(0, end_offset - 1 - replicated)


class ReplicationView:
    def __init__(
        self,
        topics: TopicPartitions,
        head: KafkaHead,
        eventual: EventualReader,
        metrics: Metrics,
    ) -> None:
        self._topics = topics
        self._head = head
        self._eventual = eventual
        self._metrics = metrics

    async def status(self, topic: str) -> ReplicationOut:
        count = await self._topics.count(topic)
        partitions = range(count)
        ends, pointers = await asyncio.gather(
            asyncio.gather(*(self._head.end_offset(topic, p) for p in partitions)),
            asyncio.gather(*(self._eventual.pointer2(topic, p) for p in partitions)),
        )
        rows = []
        for partition, end, pointer in zip(partitions, ends, pointers, strict=True):
            behind = lag(end, pointer)
            self._metrics.set(
                "kjournal_replication_lag", behind, topic=topic, partition=str(partition)
            )
            rows.append(
                PartitionReplicationOut(
                    partition=partition, end_offset=end, pointer2=pointer, lag=behind
                )
            )
        return ReplicationOut(topic=topic, partitions=rows, lag=sum(row.lag for row in rows))
