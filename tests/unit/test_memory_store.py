"""The in-memory eventual store (`kjournal.memory`) held to the eventual store's contract."""

from __future__ import annotations

from datetime import datetime

import pytest
from kjournal.fold.plan import InsertRows
from kjournal.memory import InMemoryEventualReader
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.ports import EventualReader
from kjournal.ports import ReplicatedStore
from kjournal.testing.eventual_store import EventualStoreContract
from kjournal.testing.eventual_store import StoredHead
from kjournal.testing.eventual_store import StoredPointer
from kjournal.testing.eventual_store import StoredRow
from kjournal.testing.records import T0


class InMemoryBackend:
    def __init__(self) -> None:
        self.tables = InMemoryReplicatedStore()

    def store(self, segment_size: int = 10_000) -> ReplicatedStore:
        return self.tables.sharing(segment_size)

    async def reader(self) -> EventualReader:
        return InMemoryEventualReader(self.tables)

    def rows(self, key: Key) -> list[StoredRow]:
        return [
            StoredRow(row.segment, row.event.seq_nr, row.event.partition_offset, row.meta_record_id)
            for row in self.tables.rows(key)
        ]

    def head(self, key: Key) -> StoredHead | None:
        row = self.tables.head_row(key)
        if row is None:
            return None
        return StoredHead(row.head, row.created, row.updated, row.origin, row.written)

    def pointer(self, topic: str, partition: int) -> StoredPointer | None:
        row = self.tables.pointer_row(topic, partition)
        return None if row is None else StoredPointer(row.offset, row.created, row.updated)

    def quarantined(self, key: Key) -> list[QuarantinedRecord]:
        return self.tables.quarantined(key.topic, key.id)

    def seed_head(self, key: Key, head: JournalHead, created: datetime) -> None:
        self.tables.seed_head(key, head, created, "origin")

    def seed_row(
        self, key: Key, segment: int, seq_nr: int, offset: int = 0, timestamp: datetime = T0
    ) -> None:
        event = EventRecord(Event(SeqNr(seq_nr)), timestamp, PartitionOffset(0, offset))
        self.tables.write([(key, [(InsertRows(segment, (event,), None),)])])


class TestInMemoryEventualStore(EventualStoreContract):
    @pytest.fixture
    def backend(self) -> InMemoryBackend:
        return InMemoryBackend()
