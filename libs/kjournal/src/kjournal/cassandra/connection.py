"""A Cassandra connection made in the background, so a reader starts (and answers) without it.

Until the first connection succeeds (and whenever the schema is missing) every eventual read
fails at once with CassandraUnavailable, which the API answers with 503 + Retry-After; once
connected, the driver itself reconnects to nodes that come and go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import Any

from kjournal.aio import AsyncResource
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.session import connect
from kjournal.cassandra.session import first_page
from kjournal.cassandra.settings import CassandraSettings
from kjournal.errors import CassandraUnavailable
from kjournal.errors import KJournalError
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.conflict import Conflict
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord

log = logging.getLogger(__name__)

_RETRY_MIN_S = 0.5


class CassandraConnection(AsyncResource):
    """Opens (and keeps trying to open) the session and the prepared reader."""

    def __init__(
        self,
        settings: CassandraSettings,
        retry_max_s: float = 10.0,
        initial_wait_s: float = 5.0,
    ) -> None:
        self._settings = settings
        self._retry_max_s = retry_max_s
        self._initial_wait_s = initial_wait_s
        self._session: Any = None
        self._reader: CassandraEventualReader | None = None
        self._last_error = "not connected yet"
        self._stopping = asyncio.Event()
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        self._task = asyncio.create_task(self._connect_loop(), name="kjournal-cassandra-connect")
        # A short wait, so a reader started with Cassandra up does not answer 503 at first.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._initial_wait_s):
                await self._connected.wait()

    async def close(self) -> None:
        self._stopping.set()
        if self._task is not None:
            # Not cancelled: a connect attempt runs in a thread and must hand its session back.
            await self._task
        if self._session is not None:
            session, self._session, self._reader = self._session, None, None
            await asyncio.to_thread(session.cluster.shutdown)

    @property
    def where(self) -> str:
        points = ",".join(self._settings.contact_points)
        return f"{points}:{self._settings.port}/{self._settings.keyspace}"

    def reader(self) -> CassandraEventualReader:
        if self._reader is None:
            raise CassandraUnavailable(
                f"not connected to Cassandra at {self.where}: {self._last_error}"
            )
        return self._reader

    async def probe(self) -> str:
        """Readiness: the node answers a query (CassandraUnavailable while not connected)."""
        self.reader()
        rows = await first_page(
            self._session, "SELECT release_version FROM system.local", what="readiness probe"
        )
        return f"release {rows[0][0]}" if rows else "connected"

    async def _connect_loop(self) -> None:
        delay = _RETRY_MIN_S
        attempt = 0
        while not self._stopping.is_set():
            attempt += 1
            try:
                await self._connect()
            except KJournalError as exc:
                self._last_error = str(exc)
                if attempt == 1 or attempt % 10 == 0:
                    log.warning("Cassandra at %s: %s (attempt %d)", self.where, exc, attempt)
            else:
                log.info("connected to Cassandra at %s", self.where)
                self._connected.set()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
            delay = min(delay * 2, self._retry_max_s)

    async def _connect(self) -> None:
        session = await asyncio.to_thread(connect, self._settings)
        try:
            reader = await CassandraEventualReader.create(
                session,
                self._settings.names,
                fetch_size=self._settings.fetch_size,
                java_version=self._settings.java_version,
            )
        except BaseException:
            await asyncio.to_thread(session.cluster.shutdown)
            raise
        if self._stopping.is_set():
            await asyncio.to_thread(session.cluster.shutdown)
            return
        self._session = session
        self._reader = reader


class LazyEventualReader:
    """`ports.EventualReader` over a CassandraConnection that may not be connected (yet)."""

    def __init__(self, connection: CassandraConnection) -> None:
        self._connection = connection

    async def pointer2(self, topic: str, partition: int) -> int | None:
        return await self._connection.reader().pointer2(topic, partition)

    async def head(self, key: Key) -> JournalHead | None:
        return await self._connection.reader().head(key)

    def events(
        self, key: Key, head: JournalHead, from_: SeqNr
    ) -> AsyncGenerator[EventRecord, None]:
        return self._connection.reader().events(key, head, from_)

    def ids(self, topic: str) -> AsyncGenerator[str, None]:
        return self._connection.reader().ids(topic)

    @property
    def quarantine_known(self) -> bool:
        return self._connection.reader().quarantine_known

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        return await self._connection.reader().quarantined(key)

    async def quarantined_ids(self, topic: str) -> frozenset[str]:
        return await self._connection.reader().quarantined_ids(topic)

    async def conflicts(self, key: Key, limit: int) -> list[Conflict] | None:
        return await self._connection.reader().conflicts(key, limit)
