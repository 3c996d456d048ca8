"""What the topic feed reads a topic's partitions through (kafka/tail_scanner.py implements it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Protocol

from kjournal.ports import PartitionRecords
from kjournal.wire.record import ConsumedRecord

__all__ = ["TopicSource"]


class TopicSource(PartitionRecords, Protocol):
    async def partition_count(self, topic: str) -> int: ...

    async def offsets(self, topic: str, partitions: Sequence[int]) -> dict[int, tuple[int, int]]:
        """(beginning, end) offset of each partition; UnknownTopic if the topic is gone."""
        ...

    def follow(
        self,
        topic: str,
        starts: Mapping[int, int],
        accept: Callable[[bytes | None], bool],
        wait_s: float,
    ) -> AsyncIterator[list[ConsumedRecord]]:
        """The partitions' records from `starts` on, without end, in batches (each partition's
        in offset order); an empty batch when `wait_s` passed without any."""
        ...
