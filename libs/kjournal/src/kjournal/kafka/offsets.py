"""Partitions' beginning and end offsets: the one place they are read (ListOffsets; writes
nothing), for the reader (a read's end offset, the replication status), the replicator's driver
(lag, offset-range checks) and kjournal-dev's replay.

aiokafka's errors pass through: the caller translates them with `kjournal.kafka.errors`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition

__all__ = ["FIRST_WAIT_S", "PartitionOffsets", "end_offsets", "partition_offsets"]

# Offsets come back in milliseconds; past this, a listed topic may have been deleted meanwhile.
FIRST_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class PartitionOffsets:
    beginning: int  # the oldest offset Kafka still holds
    end: int  # the offset the next record will get


async def partition_offsets(
    consumer: AIOKafkaConsumer, partitions: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], PartitionOffsets]:
    """Beginning and end offsets of the (topic, partition) pairs, but those Kafka no longer has
    (a topic deleted since its partitions were listed)."""
    wanted = [TopicPartition(topic, partition) for topic, partition in partitions]
    try:
        return await asyncio.wait_for(_offsets(consumer, wanted), FIRST_WAIT_S)
    except TimeoutError:
        # aiokafka asks again for a partition Kafka calls unknown until the request timeout: a
        # topic deleted after it was listed would hold the answer that long. Ask again for the
        # topics fresh metadata still names, for the whole request timeout.
        existing = await consumer.topics()
        return await _offsets(consumer, [tp for tp in wanted if tp.topic in existing])


async def _offsets(
    consumer: AIOKafkaConsumer, wanted: list[TopicPartition]
) -> dict[tuple[str, int], PartitionOffsets]:
    if not wanted:
        return {}
    beginning = await consumer.beginning_offsets(wanted)
    end = await consumer.end_offsets(wanted)
    return {
        (tp.topic, tp.partition): PartitionOffsets(int(beginning[tp]), int(end[tp]))
        for tp in wanted
    }


async def end_offsets(
    consumer: AIOKafkaConsumer, partitions: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    """The offset the next record of each (topic, partition) will get."""
    ends = await consumer.end_offsets([TopicPartition(t, p) for t, p in partitions])
    return {(tp.topic, tp.partition): int(end) for tp, end in ends.items()}
