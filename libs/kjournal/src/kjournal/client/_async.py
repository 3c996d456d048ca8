"""`AsyncClient`: the asyncio HTTP client of the writer and reader services.

Both clients have one source, `_async.py`; `_sync.py` is generated from it by
`scripts/dev sync-client --write`, and a unit test fails when the two drift apart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from collections.abc import Mapping
from collections.abc import Sequence
from types import TracebackType
from typing import TypeVar

import httpx

from kjournal.api.feed_items import FeedItem
from kjournal.api.schemas import ReadinessOut
from kjournal.client._base import EVENT_STREAM_HEADERS
from kjournal.client._base import BaseClient
from kjournal.client._base import Call
from kjournal.client._base import MarkResult
from kjournal.client._base import RetryPolicy
from kjournal.client._base import error_for_response
from kjournal.client._base import feed_item_of_line
from kjournal.client._base import feed_params
from kjournal.client._base import journal_id_of_line
from kjournal.client._base import merged_headers
from kjournal.client._base import trace_context
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model.replication import TopicReplication
from kjournal.model.results import AppendResult
from kjournal.model.results import JournalStatus

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient(BaseClient):
    """Asyncio client: `async with AsyncClient(writer_url=..., reader_url=...) as client: ...`.

    Results are the library's own types (AppendResult, EventRecord, JournalStatus); failures are
    kjournal errors rebuilt from the services' problem bodies. Failures that may pass are
    retried within the `RetryPolicy` (30 s by default): reads resume after the last event
    received; appends, deletes and marks are sent again (a resent append is dropped as a
    duplicate); a purge only when no connection could be opened. `token` is sent as a bearer
    token to services with authentication on (401 raises NotAuthenticated, 403
    PermissionDenied).
    """

    def __init__(
        self,
        writer_url: str | None = None,
        reader_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        token: str | None = None,
    ) -> None:
        super().__init__(writer_url, reader_url, retry)
        self._http = httpx.AsyncClient(
            timeout=timeout, headers=merged_headers(headers, token), transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call[T]) -> T:
        attempt = 0
        first_failure: float | None = None
        while True:
            attempt += 1
            try:
                response = await self._http.request(
                    call.method,
                    call.url,
                    params=call.params,
                    json=call.json,
                    headers={**trace_context(), **(call.headers or {})},
                )
            except httpx.TransportError as exc:
                first_failure = first_failure or time.monotonic()
                failing_for = time.monotonic() - first_failure
                await asyncio.sleep(
                    self._pause_after_transport_error(call, exc, attempt, failing_for)
                )
                continue
            first_failure = first_failure or time.monotonic()
            failing_for = time.monotonic() - first_failure
            pause = self._pause_after_answer(call, response, attempt, failing_for)
            if pause is None:
                return call.parse(response)
            await asyncio.sleep(pause)

    # --- writer --------------------------------------------------------------------------------

    async def append(
        self,
        key: Key,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        expected_seq_nr: int | None = None,
    ) -> AppendResult:
        """Append events atomically; returns once the journal took them (docs/concurrency.md).

        `expected_seq_nr`: append only if the journal is at this seqNr (the events then start at
        expected_seq_nr + 1); 0: only if the journal does not exist. Raises ConditionFailed if
        not, AppendConflict if the journal holds these seqNrs with other content, SeqNrGap if
        they start more than 100,000 above the journal's seqNr. An identical append the journal
        already holds (a retry) returns its copy, with `replay` set.
        """
        return await self._send(self._append_call(key, events, metadata, headers, expected_seq_nr))

    async def delete(self, key: Key, to: int) -> PartitionOffset:
        return await self._send(self._delete_call(key, to))

    async def purge(self, key: Key) -> PartitionOffset:
        return await self._send(self._purge_call(key))

    async def mark(self, key: Key, id: str | None = None) -> MarkResult:
        return await self._send(self._mark_call(key, id))

    # --- reader --------------------------------------------------------------------------------

    async def read(
        self, key: Key, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncGenerator[EventRecord, None]:
        """Stream events with from_ ≤ seqNr ≤ to; close it (contextlib.aclosing) if you stop early."""
        cursor = self._read_cursor(key, from_, to, limit)
        while True:
            try:
                async with self._http.stream(
                    "GET", cursor.url, params=cursor.params(), headers=trace_context()
                ) as response:
                    if not response.is_success:
                        await response.aread()
                        cursor.rejected(response)
                    else:
                        async for line in _event_lines(response):
                            record = cursor.take(line)
                            if record is not None:
                                yield record
                                if cursor.advance(record):
                                    return
                            elif cursor.failed:
                                break
                        else:
                            return
            except httpx.TransportError as exc:
                cursor.unreachable(exc)
            await asyncio.sleep(cursor.pause())

    async def feed(
        self,
        topic: str,
        after: str | None = None,
        *,
        from_end: bool = False,
        tags: Sequence[str] = (),
        id_prefix: str | None = None,
        partitions: Sequence[int] | None = None,
    ) -> AsyncGenerator[FeedItem, None]:
        """The topic feed's catch-up (docs/feed.md): its items from `after` (a cursor an item
        gave; None: the start, or the end with `from_end`) up to the end offsets as of the
        request, the last one an `end` item whose cursor resumes after everything read. Not
        resumed after a failure (its error is raised): start again from the last item's cursor.
        Close it (contextlib.aclosing) if you stop early."""
        params = feed_params(from_end, tags, id_prefix, partitions)
        if after is not None:
            params["after"] = after
        async with self._http.stream(
            "GET", self._feed_url(topic), params=params, headers=trace_context()
        ) as response:
            if not response.is_success:
                await response.aread()
                raise error_for_response(response)
            async for line in response.aiter_lines():
                if line:
                    yield feed_item_of_line(line)

    async def follow(
        self,
        topic: str,
        after: str | None = None,
        *,
        from_end: bool = False,
        tags: Sequence[str] = (),
        id_prefix: str | None = None,
        partitions: Sequence[int] | None = None,
        heartbeat_s: float | None = None,
    ) -> AsyncGenerator[FeedItem, None]:
        """Follow the topic's feed live from `after` (a cursor an item gave; None: from the
        start, or the end with `from_end`), without end: every item, heartbeats included, has
        the cursor to resume right after it. Reader restarts and other failures worth retrying
        are resumed after the last item, within the retry policy (docs/feed.md). `heartbeat_s`:
        how long the reader waits without an entry before it sends a heartbeat (default 15 s).
        Close it (contextlib.aclosing) when you stop."""
        cursor = self._follow_cursor(
            topic, after, from_end, tags, id_prefix, partitions, heartbeat_s
        )
        while True:
            try:
                async with self._http.stream(
                    "GET",
                    cursor.url,
                    params=cursor.follow_params(),
                    headers={**trace_context(), **EVENT_STREAM_HEADERS},
                ) as response:
                    if not response.is_success:
                        await response.aread()
                        cursor.rejected(response)
                    else:
                        async for line in response.aiter_lines():
                            item = cursor.take_line(line)
                            if item is not None:
                                cursor.delivered(item)
                                yield item
                            elif cursor.failed:
                                break
                        else:
                            cursor.unreachable(httpx.RemoteProtocolError("the stream ended"))
            except httpx.TransportError as exc:
                cursor.unreachable(exc)
            await asyncio.sleep(cursor.pause())

    async def pointer(self, key: Key) -> SeqNr | None:
        """The last seqNr, or None if there is no such journal."""
        return await self._send(self._pointer_call(key))

    async def status(self, key: Key) -> JournalStatus | None:
        return await self._send(self._status_call(key))

    async def ids(self, topic: str) -> AsyncGenerator[str, None]:
        """The ids of the topic's replicated journals (streamed; not resumed after a failure)."""
        async with self._http.stream(
            "GET", self._ids_url(topic), headers=trace_context()
        ) as response:
            if not response.is_success:
                await response.aread()
                raise error_for_response(response)
            async for line in response.aiter_lines():
                if line:
                    yield journal_id_of_line(line)

    async def replication(self, topic: str) -> TopicReplication:
        return await self._send(self._replication_call(topic))

    async def ready(self, service: str = "reader") -> ReadinessOut:
        """The service's readiness report (503 included: it is an answer, not a failure)."""
        return await self._send(self._ready_call(service))


async def _event_lines(response: httpx.Response) -> AsyncGenerator[str | bytes, None]:
    """An events answer's lines: split at once when it came whole (with its length: a short
    read), else as they arrive."""
    if "content-length" in response.headers:
        for whole_line in (await response.aread()).splitlines():
            yield whole_line
    else:
        async for line in response.aiter_lines():
            yield line
