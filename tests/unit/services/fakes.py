"""A journal that records what it is asked and answers without Kafka."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from types import SimpleNamespace
from typing import Any
from typing import cast

from fastapi import FastAPI
from kjournal.errors import KJournalError
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import RecordMetadata
from kjournal.model.results import AppendResult
from kjournal.reads import ReadSide
from kjournal.writes import WriteSide
from kjournal_reader.app import create_app as create_reader
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_reader.state import ReaderState
from kjournal_writer.app import create_app as create_writer
from kjournal_writer.settings import Settings as WriterSettings
from kjournal_writer.state import WriterState


class FakeJournal:
    def __init__(
        self,
        key: Key,
        records: Sequence[EventRecord] = (),
        fail_at: int | None = None,
        error: Exception | None = None,
    ) -> None:
        self.key = key
        self.calls: list[tuple[str, Any]] = []
        self._records = records
        self._fail_at = fail_at
        self._error = error or KJournalError("boom")
        self.expects: list[int | None] = []

    async def view(self) -> SimpleNamespace:
        """What the reader's routes take from a view: the journal's seqNr (its ETag)."""
        return SimpleNamespace(info=SimpleNamespace(seq_nr=len(self._records) or None))

    def events(
        self, view: object, from_: int = 1, to: int = 2**63 - 1, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        return self.read(from_, to, limit)

    async def append(
        self,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        expect: int | None = None,
    ) -> AppendResult:
        assert isinstance(events, Events)
        self.calls.append(("append", (events, metadata, headers)))
        self.expects.append(expect)
        return AppendResult(PartitionOffset(0, len(self.calls)), events.range, datetime.now(UTC))

    async def delete(self, to: int) -> PartitionOffset:
        self.calls.append(("delete", to))
        return PartitionOffset(0, 1)

    async def purge(self) -> PartitionOffset:
        self.calls.append(("purge", None))
        return PartitionOffset(0, 2)

    async def mark(self, id: str | None = None) -> PartitionOffset:
        self.calls.append(("mark", id))
        return PartitionOffset(0, 3)

    async def read(
        self, from_: int = 1, to: int = 2**63 - 1, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        self.calls.append(("read", (from_, to, limit)))
        for index, record in enumerate(self._records):
            if index == self._fail_at:
                raise self._error
            yield record
        if self._fail_at is not None and self._fail_at >= len(self._records):
            raise self._error


class FakeJournals:
    """Stands in for a service's side of the journals (`WriteSide`, `ReadSide`) in its app's
    state: one FakeJournal per key, or `only` for every key (its key set to the one asked)."""

    def __init__(self, only: FakeJournal | None = None) -> None:
        self.journals: dict[Key, FakeJournal] = {}
        self._only = only

    def journal(self, key: Key) -> FakeJournal:
        if self._only is not None:
            self._only.key = key
            return self._only
        return self.journals.setdefault(key, FakeJournal(key))


def writer_over(journals: FakeJournals, settings: WriterSettings | None = None) -> FastAPI:
    """The writer's app over `journals`, where its lifespan (not run) would open Kafka's."""
    app = create_writer(settings or WriterSettings())
    WriterState.of(app).writes = cast(WriteSide, journals)
    return app


def reader_over(journals: FakeJournals, settings: ReaderSettings | None = None) -> FastAPI:
    """The reader's app over `journals`, where its lifespan (not run) would open the read side."""
    app = create_reader(settings or ReaderSettings())
    ReaderState.of(app).reads = cast(ReadSide, journals)
    return app
