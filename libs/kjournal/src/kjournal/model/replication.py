"""Replication progress of a topic's partitions, and the one definition of replication lag.

    lag = end offset − max(pointer2 + 1, beginning offset)   (never below 0)

the records Kafka still holds that Cassandra does not: `pointer2` is the last offset replicated
(None: none yet), the beginning offset the oldest one retention has kept. A journal's status counts
the same way from offset 0, since the read path does not ask Kafka for the beginning offset (the
two differ only for a partition nothing was ever replicated from and whose oldest records
retention has already deleted).
"""

from __future__ import annotations

from dataclasses import dataclass


def replication_lag(beginning: int, end: int, pointer2: int | None) -> int:
    """Records of a partition Kafka holds that are not replicated yet (see the module docstring)."""
    start = beginning if pointer2 is None else max(pointer2 + 1, beginning)
    return max(0, end - start)


@dataclass(frozen=True, slots=True)
class PartitionReplication:
    partition: int
    beginning_offset: int  # the oldest offset Kafka still holds
    end_offset: int  # the offset the next record will get
    pointer2: int | None  # the last offset replicated; None if none yet

    @property
    def lag(self) -> int:
        return replication_lag(self.beginning_offset, self.end_offset, self.pointer2)


@dataclass(frozen=True, slots=True)
class TopicReplication:
    topic: str
    partitions: tuple[PartitionReplication, ...]

    @property
    def lag(self) -> int:
        return sum(partition.lag for partition in self.partitions)
