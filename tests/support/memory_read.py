"""An in-memory partition log: the Kafka side of the read path, for unit tests of the merge.

The eventual side is `kjournal.memory.InMemoryEventualReader`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from kjournal.model import ActionRecord, Key
from kjournal.tail import Tail, TailBuilder
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord, decode_action_record


class InMemoryPartitionLog:
    """A topic's records as a list per partition: `tail.TailScanner` and `read.PartitionOffsets`."""

    def __init__(self, topic: str, partitions: int, payload_budget: int = 1 << 30) -> None:
        self.topic = topic
        self.partitions = partitions
        self.payload_budget = payload_budget
        self.records: dict[int, list[ConsumedRecord]] = {p: [] for p in range(partitions)}
        self.decoded_payload_keys: list[bytes] = []

    def append(
        self, key: bytes, value: bytes | None, headers: Sequence[tuple[str, bytes]], ts: int
    ) -> ConsumedRecord:
        partition = partition_for(key, self.partitions)
        log = self.records[partition]
        record = ConsumedRecord(self.topic, partition, len(log), key, value, list(headers), ts)
        log.append(record)
        return record

    async def partition(self, key: Key) -> int:
        return partition_for(key.id.encode(), self.partitions)

    async def end_offset(self, topic: str, partition: int) -> int:
        return len(self.records[partition])

    async def actions(
        self, key: Key, partition: int, start: int, end: int
    ) -> AsyncIterator[ActionRecord]:
        for record in self.records[partition][start:end]:
            if record.key == key.id.encode():
                action = decode_action_record(record)
                if action is not None:
                    yield action

    async def tail(self, key: Key, partition: int, start: int, end: int) -> Tail:
        builder = TailBuilder(start, end, self.payload_budget)
        async for record in self.actions(key, partition, start, end):
            builder.add(record)
        return builder.build()
