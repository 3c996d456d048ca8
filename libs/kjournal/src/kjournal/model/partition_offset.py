"""Kafka positions."""

from __future__ import annotations

from dataclasses import dataclass

Partition = int
Offset = int


@dataclass(frozen=True, slots=True, order=True)
class PartitionOffset:
    """Where a record sits in its topic: partition ≥ 0, offset ≥ 0."""

    partition: Partition
    offset: Offset

    def __post_init__(self) -> None:
        if self.partition < 0 or self.offset < 0:
            raise ValueError(f"negative partition or offset: {self.partition}:{self.offset}")

    def __str__(self) -> str:
        return f"{self.partition}:{self.offset}"
