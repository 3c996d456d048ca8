"""`ReaderOutcomes`: the writer learns each append's outcome from the reader service (over HTTP).

The writer has no Cassandra and does not follow Kafka, so it cannot know what the append rule
makes of its record (docs/concurrency.md); the reader can: `GET /v1/journals/{topic}/{id}/appends/
{offset}`. The caller's bearer token is passed on (the reader asks for the same `journal:append`
scope), and so is the trace context. When the reader cannot tell, the append is in Kafka but its
fate is unknown to the writer: OutcomeUnknown (504), and the client's resend of the same append is
answered as a replay or a refusal, never stored twice.
"""

from __future__ import annotations

from contextvars import ContextVar
from types import TracebackType

import aiohttp
from kjournal.api import (
    AppendOutcomeOut,
    Problem,
    append_outcome_from_out,
    error_for_problem,
    quote_segment,
)
from kjournal.errors import JournalQuarantined, OutcomeUnknown
from kjournal.model import AppendOutcome, Key
from opentelemetry.propagate import inject
from pydantic import ValidationError
from yarl import URL

from kjournal_writer.settings import ReaderLinkSettings

__all__ = ["CALLER_AUTHORIZATION", "ReaderOutcomes"]

CALLER_AUTHORIZATION: ContextVar[str | None] = ContextVar(
    "kjournal_writer_caller_authorization", default=None
)
"""The `Authorization` header of the request being served, passed on to the reader."""


class ReaderOutcomes:
    """`kjournal.ports.AppendOutcomes` over the reader's HTTP API; open with `async with`.

    Every append costs one of these requests, so the link is aiohttp's: on the 2-core bench host
    an httpx request cost the writer 1.5 to 2.9 ms of CPU, an aiohttp one 0.3 ms
    (docs/performance.md)."""

    def __init__(self, settings: ReaderLinkSettings) -> None:
        if not settings.url:
            raise ValueError("KJOURNAL_READER__URL is not set")
        self._url = settings.url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=settings.timeout_s)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ReaderOutcomes:
        # one connection per append in flight, kept alive (no cap: the writer's own limits bound
        # the appends in flight)
        self._session = aiohttp.ClientSession(
            timeout=self._timeout, connector=aiohttp.TCPConnector(limit=0)
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        session = self._session
        if session is None:
            raise RuntimeError("ReaderOutcomes is used outside `async with`")
        headers: dict[str, str] = {}
        authorization = CALLER_AUTHORIZATION.get()
        if authorization:
            headers["authorization"] = authorization
        inject(headers)
        path = f"/v1/journals/{quote_segment(key.topic)}/{quote_segment(key.id)}/appends/{offset}"
        landed = f"the append of journal {key} landed at offset {offset}"
        try:
            async with session.get(
                URL(self._url + path, encoded=True), headers=headers, allow_redirects=False
            ) as response:
                status, content = response.status, await response.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise OutcomeUnknown(
                f"{landed}, but the reader at {self._url} did not tell its outcome "
                f"({type(exc).__name__}: {exc}); resending the same append is safe"
            ) from exc
        try:
            if status == 200:
                return append_outcome_from_out(AppendOutcomeOut.model_validate_json(content))
            error = error_for_problem(Problem.model_validate_json(content))
        except ValidationError as exc:
            raise OutcomeUnknown(
                f"{landed}, but the reader answered {status} with a body this "
                "writer does not understand; resending the same append is safe"
            ) from exc
        if isinstance(error, JournalQuarantined | OutcomeUnknown):
            raise error
        raise OutcomeUnknown(
            f"{landed}, but the reader answered {status} for its outcome: {error}; "
            "resending the same append is safe"
        ) from error
