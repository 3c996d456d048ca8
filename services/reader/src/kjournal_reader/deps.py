"""The reader's own request dependencies (all `async def`: FastAPI runs plain `def` ones in a
thread pool, a thread hop per dependency per request): the eventual store and the Cassandra
connection, the open Journals and the journal a URL names. The shared ones (the key or topic a URL
names, metrics) are `kjournal_service.deps`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, cast

from fastapi import Depends, Request
from kjournal.cassandra.connection import CassandraConnection
from kjournal.journal import Journal, Journals
from kjournal.ports import EventualReader
from kjournal.read.outcome import LocalOutcomes
from kjournal_service.deps import KeyDep

from kjournal_reader.stream_slots import StreamSlot, StreamSlots


async def get_eventual(request: Request) -> EventualReader:
    return cast(EventualReader, request.app.state.eventual)


def outcomes_of(request: Request) -> LocalOutcomes:
    """The appends' outcomes, from this process's folds (a hot path: no dependency graph)."""
    return cast(LocalOutcomes, request.app.state.outcomes)


async def get_cassandra(request: Request) -> CassandraConnection:
    return cast(CassandraConnection, request.app.state.cassandra)


async def stream_slot(request: Request) -> AsyncIterator[StreamSlot]:
    """A streamed-read slot (Busy, a 503, if none is free), taken before any work is done and
    held until the answer has been streamed, or abandoned (FastAPI leaves a dependency with
    `yield` after the response is sent)."""
    slot = cast(StreamSlots, request.app.state.stream_slots).take()
    try:
        yield slot
    finally:
        slot.release()


async def get_journals(request: Request) -> Journals:
    return cast(Journals, request.app.state.journals)


JournalsDep = Annotated[Journals, Depends(get_journals)]


async def get_journal(key: KeyDep, journals: JournalsDep) -> Journal:
    return journals.journal(key)


JournalDep = Annotated[Journal, Depends(get_journal)]
EventualDep = Annotated[EventualReader, Depends(get_eventual)]
StreamSlotDep = Annotated[StreamSlot, Depends(stream_slot)]
CassandraDep = Annotated[CassandraConnection, Depends(get_cassandra)]
