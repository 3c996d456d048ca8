"""The reader's own request dependencies (all `async def`: FastAPI runs plain `def` ones in a
thread pool, a thread hop per dependency per request): the eventual store and the Cassandra
connection. The shared ones (the open Journals, the journal or topic a URL names, metrics) are
`kjournal_service.deps`."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Request
from kjournal.cassandra.connection import CassandraConnection
from kjournal.ports import EventualReader


async def get_eventual(request: Request) -> EventualReader:
    return cast(EventualReader, request.app.state.eventual)


async def get_cassandra(request: Request) -> CassandraConnection:
    return cast(CassandraConnection, request.app.state.cassandra)


EventualDep = Annotated[EventualReader, Depends(get_eventual)]
CassandraDep = Annotated[CassandraConnection, Depends(get_cassandra)]
