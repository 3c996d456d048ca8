"""In-memory stand-ins for the read path's ports, for unit tests of the merge logic."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import ActionRecord, EventRecord, Key, SeqNr
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.tail import Tail, TailBuilder
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord, decode_action_record


class InMemoryEventualReader:
    """`ports.EventualReader` over an `InMemoryReplicatedStore`."""

    def __init__(self, store: InMemoryReplicatedStore) -> None:
        self.store = store

    async def pointer2(self, topic: str, partition: int) -> int | None:
        return self.store.pointer2(topic, partition)

    async def head(self, key: Key) -> JournalHead | None:
        return self.store.head(key)

    async def events(
        self, key: Key, head: JournalHead, from_: SeqNr
    ) -> AsyncGenerator[EventRecord, None]:
        for event in self.store.events(key):
            if event.seq_nr >= from_:
                yield event

    async def ids(self, topic: str) -> AsyncGenerator[str, None]:
        for key in sorted(self.store.keys(), key=str):
            if key.topic == topic and self.store.head(key) is not None:
                yield key.id

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        records = self.store.quarantined(key.topic, key.id)
        return records[0] if records else None


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
