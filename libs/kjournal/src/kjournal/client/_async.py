"""`AsyncClient`: the asyncio HTTP client of the writer and reader services (mirrors `Client`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from types import TracebackType
from typing import Any

import httpx

from kjournal.api.convert import append_request_body, append_result, journal_status_from_out
from kjournal.api.problems import error_for_problem
from kjournal.api.schemas import (
    AppendResponse,
    JournalStatusOut,
    MarkResponse,
    PointerOut,
    PositionOut,
    Problem,
    ReadinessOut,
    ReplicationOut,
)
from kjournal.client._base import (
    MarkResult,
    RetryPolicy,
    base_url,
    decode_id_line,
    decode_line,
    error_for_response,
    journal_path,
    merged_headers,
    read_params,
    topic_path,
    transport_error,
)
from kjournal.errors import JournalNotFound
from kjournal.journal import AppendResult, JournalStatus
from kjournal.model import (
    SEQ_NR_MAX,
    Event,
    EventRecord,
    Events,
    Key,
    PartitionOffset,
    RecordMetadata,
    SeqNr,
)

__all__ = ["AsyncClient"]


class AsyncClient:
    """Asyncio client: `async with AsyncClient(writer_url=..., reader_url=...) as client: ...`.

    Results are the library's own types (AppendResult, EventRecord, JournalStatus); failures are
    kjournal errors rebuilt from the services' problem bodies. GETs are retried (reads resume
    after the last event received); writes only when no connection could be opened.
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
    ) -> None:
        self.writer_url = writer_url
        self.reader_url = reader_url
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(
            timeout=timeout, headers=merged_headers(headers), transport=transport
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

    # --- I/O -----------------------------------------------------------------------------------

    async def _write(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.request(method, url, **kwargs)
            except httpx.ConnectError as exc:  # nothing was sent: safe to try again
                if attempt >= self.retry.attempts:
                    raise transport_error(exc, url) from exc
                await asyncio.sleep(self.retry.delay(attempt))
                continue
            except httpx.TransportError as exc:
                raise transport_error(exc, url) from exc
            if response.is_success:
                return response
            raise error_for_response(response)

    async def _get(self, url: str, params: Mapping[str, Any] | None = None) -> httpx.Response:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.get(url, params=params)
            except httpx.TransportError as exc:
                if attempt >= self.retry.attempts:
                    raise transport_error(exc, url) from exc
                await asyncio.sleep(self.retry.delay(attempt))
                continue
            if response.is_success:
                return response
            if response.status_code in self.retry.statuses and attempt < self.retry.attempts:
                await asyncio.sleep(self.retry.delay(attempt, response.headers.get("retry-after")))
                continue
            raise error_for_response(response)

    # --- writer --------------------------------------------------------------------------------

    async def append(
        self,
        key: Key,
        events: Sequence[Event] | Events,
        metadata: RecordMetadata | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AppendResult:
        url = base_url(self.writer_url, "writer") + journal_path(key, "/events")
        response = await self._write(
            "POST", url, json=append_request_body(events, metadata, headers)
        )
        return append_result(AppendResponse.model_validate_json(response.content))

    async def delete(self, key: Key, to: int) -> PartitionOffset:
        url = base_url(self.writer_url, "writer") + journal_path(key, "/events")
        out = PositionOut.model_validate_json(
            (await self._write("DELETE", url, params={"to": to})).content
        )
        return PartitionOffset(out.partition, out.offset)

    async def purge(self, key: Key) -> PartitionOffset:
        url = base_url(self.writer_url, "writer") + journal_path(key)
        out = PositionOut.model_validate_json((await self._write("DELETE", url)).content)
        return PartitionOffset(out.partition, out.offset)

    async def mark(self, key: Key, id: str | None = None) -> MarkResult:
        url = base_url(self.writer_url, "writer") + journal_path(key, "/marks")
        out = MarkResponse.model_validate_json(
            (await self._write("POST", url, json={} if id is None else {"id": id})).content
        )
        return MarkResult(out.id, PartitionOffset(out.partition, out.offset))

    # --- reader --------------------------------------------------------------------------------

    async def read(
        self, key: Key, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncGenerator[EventRecord, None]:
        """Stream events with from_ ≤ seqNr ≤ to; close it (contextlib.aclosing) if you stop early."""
        url = base_url(self.reader_url, "reader") + journal_path(key, "/events")
        next_from, remaining, failures = from_, limit, 0
        while True:
            retry_after: str | None = None
            cause: BaseException | None = None
            try:
                async with self._http.stream(
                    "GET", url, params=read_params(next_from, to, remaining)
                ) as response:
                    if not response.is_success:
                        await response.aread()
                        error = error_for_response(response)
                        retryable = response.status_code in self.retry.statuses
                        retry_after = response.headers.get("retry-after")
                    else:
                        async for line in response.aiter_lines():
                            item = decode_line(line) if line else None
                            if item is None:
                                continue
                            if isinstance(item, Problem):
                                error = error_for_problem(item)
                                retryable = item.status in self.retry.statuses
                                break
                            yield item
                            failures = 0
                            next_from = item.seq_nr + 1
                            if remaining is not None:
                                remaining -= 1
                            if next_from > to or remaining == 0:
                                return
                        else:
                            return
            except httpx.TransportError as exc:
                error, retryable, cause = transport_error(exc, url), True, exc
            failures += 1
            if not retryable or failures >= self.retry.attempts:
                raise error from cause
            await asyncio.sleep(self.retry.delay(failures, retry_after))

    async def pointer(self, key: Key) -> SeqNr | None:
        """The last seqNr, or None if there is no such journal."""
        url = base_url(self.reader_url, "reader") + journal_path(key, "/pointer")
        try:
            return SeqNr(PointerOut.model_validate_json((await self._get(url)).content).seq_nr)
        except JournalNotFound:
            return None

    async def status(self, key: Key) -> JournalStatus | None:
        url = base_url(self.reader_url, "reader") + journal_path(key)
        try:
            out = JournalStatusOut.model_validate_json((await self._get(url)).content)
        except JournalNotFound:
            return None
        return journal_status_from_out(out)

    async def ids(self, topic: str) -> AsyncGenerator[str, None]:
        """The ids of the topic's replicated journals (streamed; not resumed after a failure)."""
        url = base_url(self.reader_url, "reader") + topic_path(topic, "/journals")
        async with self._http.stream("GET", url) as response:
            if not response.is_success:
                await response.aread()
                raise error_for_response(response)
            async for line in response.aiter_lines():
                if line:
                    item = decode_id_line(line)
                    if isinstance(item, Problem):
                        raise error_for_problem(item)
                    yield item

    async def replication(self, topic: str) -> ReplicationOut:
        url = base_url(self.reader_url, "reader") + topic_path(topic, "/replication")
        return ReplicationOut.model_validate_json((await self._get(url)).content)

    async def ready(self, service: str = "reader") -> ReadinessOut:
        """The service's readiness report (503 included: it is an answer, not a failure)."""
        url = base_url(self.reader_url if service == "reader" else self.writer_url, service)
        try:
            response = await self._http.get(url + "/readyz")
        except httpx.TransportError as exc:
            raise transport_error(exc, url) from exc
        return ReadinessOut.model_validate_json(response.content)
