"""The reader's own request dependencies (all `async def`: FastAPI runs plain `def` ones in a
thread pool, a thread hop per dependency per request), from the reader's typed state: the
eventual store and the Cassandra connection, the read side and the journal a URL names, a stream
slot. The shared ones (the
key or topic a URL names, metrics) are `kjournal_service.deps`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends
from fastapi import Request
from kjournal.cassandra.connection import CassandraConnection
from kjournal.ports import EventualReader
from kjournal.read.outcome import LocalOutcomes
from kjournal.reads import ReadableJournal
from kjournal.reads import ReadSide
from kjournal_service.params import IdPath
from kjournal_service.params import TopicPath

from kjournal_reader.state import ReaderState
from kjournal_reader.stream_slots import StreamSlot


async def get_eventual(request: Request) -> EventualReader:
    return ReaderState.of(request.app).eventual


async def get_cassandra(request: Request) -> CassandraConnection:
    return ReaderState.of(request.app).cassandra


def outcomes_of(request: Request) -> LocalOutcomes:
    """The appends' outcomes, from this process's folds (a hot path: no dependency graph)."""
    return ReaderState.of(request.app).reads.outcomes


async def stream_slot(request: Request) -> AsyncIterator[StreamSlot]:
    """A streamed-read slot (Busy, a 503, if none is free), taken before any work is done and
    held until the answer has been streamed, or abandoned (FastAPI leaves a dependency with
    `yield` after the response is sent)."""
    slot = ReaderState.of(request.app).stream_slots.take()
    try:
        yield slot
    finally:
        slot.release()


async def get_reads(request: Request) -> ReadSide:
    return ReaderState.of(request.app).reads


async def get_journal(request: Request, topic: TopicPath, id: IdPath) -> ReadableJournal:
    return ReaderState.of(request.app).journal(topic, id)


ReadsDep = Annotated[ReadSide, Depends(get_reads)]
JournalDep = Annotated[ReadableJournal, Depends(get_journal)]
EventualDep = Annotated[EventualReader, Depends(get_eventual)]
StreamSlotDep = Annotated[StreamSlot, Depends(stream_slot)]
CassandraDep = Annotated[CassandraConnection, Depends(get_cassandra)]
