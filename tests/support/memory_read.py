"""An in-memory partition log: the Kafka side of the read path and of the topic feed, for unit
tests of the merge and the feed.

The eventual side is `kjournal.memory.InMemoryEventualReader`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

from kjournal.model import ActionRecord
from kjournal.model import Key
from kjournal.read.tail import Tail
from kjournal.read.tail import TailBuilder
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import decode_action_record


class InMemoryPartitionLog:
    """A topic's records as a list per partition (`written`): `tail.TailScanner`,
    `read.PartitionOffsets`, `feed.TopicSource` and the log side of `expiry.ExpiryLog`.
    `beginning` is where each partition starts (retention)."""

    def __init__(self, topic: str, partitions: int, payload_budget: int = 1 << 30) -> None:
        self.topic = topic
        self.partitions = partitions
        self.payload_budget = payload_budget
        self.written: dict[int, list[ConsumedRecord]] = {p: [] for p in range(partitions)}
        self.decoded_payload_keys: list[bytes] = []
        self.beginning: dict[int, int] = dict.fromkeys(range(partitions), 0)

    def append(
        self, key: bytes, value: bytes | None, headers: Sequence[tuple[str, bytes]], ts: int
    ) -> ConsumedRecord:
        partition = partition_for(key, self.partitions)
        log = self.written[partition]
        record = ConsumedRecord(self.topic, partition, len(log), key, value, list(headers), ts)
        log.append(record)
        return record

    async def partition(self, key: Key) -> int:
        return partition_for(key.id.encode(), self.partitions)

    async def end_offset(self, topic: str, partition: int) -> int:
        return len(self.written[partition])

    async def actions(
        self, key: Key, partition: int, start: int, end: int
    ) -> AsyncIterator[ActionRecord]:
        for record in self.written[partition][max(start, self.beginning[partition]) : end]:
            if record.key == key.id.encode():
                action = decode_action_record(record)
                if action is not None:
                    yield action

    async def tail(self, key: Key, partition: int, start: int, end: int) -> Tail:
        builder = TailBuilder(start, end, self.payload_budget)
        async for record in self.actions(key, partition, start, end):
            builder.add(record)
        return builder.build()

    async def partition_count(self, topic: str) -> int:
        return self.partitions

    async def offsets(self, topic: str, partitions: Sequence[int]) -> dict[int, tuple[int, int]]:
        return {p: (self.beginning[p], len(self.written[p])) for p in partitions}

    async def records(
        self,
        topic: str,
        partition: int,
        start: int,
        end: int,
        accept: Callable[[bytes | None], bool],
    ) -> AsyncIterator[ConsumedRecord]:
        for record in self.written[partition][max(start, self.beginning[partition]) : end]:
            if accept(record.key):
                yield record

    async def follow(
        self,
        topic: str,
        starts: Mapping[int, int],
        accept: Callable[[bytes | None], bool],
        wait_s: float,
    ) -> AsyncIterator[list[ConsumedRecord]]:
        """What the log holds past `starts`, then an empty batch whenever nothing new came."""
        next_offsets = dict(starts)
        while True:
            batch: list[ConsumedRecord] = []
            for partition, offset in next_offsets.items():
                # as a consumer reset to the log start when retention passed its position
                offset = max(offset, self.beginning[partition])
                records = self.written[partition][offset:]
                next_offsets[partition] = offset + len(records)
                batch += [record for record in records if accept(record.key)]
            yield batch
            await asyncio.sleep(0)
