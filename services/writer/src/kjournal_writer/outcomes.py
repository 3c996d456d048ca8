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
from dataclasses import dataclass
from types import TracebackType

import aiohttp
from kjournal.api import (
    AppendOutcomeOut,
    Problem,
    append_outcome_from_out,
    error_for_problem,
    quote_segment,
)
from kjournal.errors import JournalQuarantined, KJournalError, OutcomeUnknown
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
        self._link: _Link | None = None
        self._retired: set[_Link] = set()

    def _new_link(self) -> _Link:
        # one connection per append in flight, kept alive (no cap: the writer's own limits bound
        # the appends in flight)
        return _Link(
            aiohttp.ClientSession(timeout=self._timeout, connector=aiohttp.TCPConnector(limit=0))
        )

    async def __aenter__(self) -> ReaderOutcomes:
        self._link = self._new_link()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        links = [*self._retired, *([self._link] if self._link else [])]
        self._link, self._retired = None, set()
        for link in links:
            await link.session.close()

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        link = self._link
        if link is None:
            raise RuntimeError("ReaderOutcomes is used outside `async with`")
        link.asks += 1
        try:
            return await self._ask(link, key, offset)
        finally:
            link.asks -= 1
            if link in self._retired and link.asks == 0:
                self._retired.discard(link)
                await link.session.close()

    def _retire(self, link: _Link) -> None:
        """Something other than the reader answered on one of the link's kept-alive connections
        (e.g. a proxy that took it while the reader's Service did not route yet): aiohttp already
        pooled it again (an empty body ends with its headers), so later asks go over a new link,
        and this one closes once its asks in flight are answered."""
        if link is self._link:
            self._retired.add(link)
            self._link = self._new_link()

    async def _ask(self, link: _Link, key: Key, offset: int) -> AppendOutcome:
        headers: dict[str, str] = {}
        authorization = CALLER_AUTHORIZATION.get()
        if authorization:
            headers["authorization"] = authorization
        inject(headers)
        path = f"/v1/journals/{quote_segment(key.topic)}/{quote_segment(key.id)}/appends/{offset}"
        landed = f"the append of journal {key} landed at offset {offset}"
        stranger: str | None = None
        try:
            async with link.session.get(
                URL(self._url + path, encoded=True), headers=headers, allow_redirects=False
            ) as response:
                status = response.status
                if response.content_type in _READER_CONTENT_TYPES:
                    content = await response.read()
                else:
                    response.close()
                    self._retire(link)
                    stranger = _sender(response.content_type, response.headers.get("server"))
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise OutcomeUnknown(
                f"{landed}, but the reader at {self._url} did not tell its outcome "
                f"({type(exc).__name__}: {exc}); resending the same append is safe"
            ) from exc
        if stranger is not None:
            raise OutcomeUnknown(
                f"{landed}, but {self._url} answered {status} with {stranger}, not a reader's "
                "answer; resending the same append is safe"
            )
        answer = _reader_answer(status, content)
        if answer is None:
            self._retire(link)
            raise OutcomeUnknown(
                f"{landed}, but the reader answered {status} with a body this writer does not "
                f"understand ({_excerpt(content)}); resending the same append is safe"
            )
        if isinstance(answer, AppendOutcome):
            return answer
        error = answer
        if isinstance(error, JournalQuarantined | OutcomeUnknown):
            raise error
        raise OutcomeUnknown(
            f"{landed}, but the reader answered {status} for its outcome: {error}; "
            "resending the same append is safe"
        ) from error


@dataclass(eq=False)
class _Link:
    """An aiohttp session to the reader, and how many asks are in flight on it."""

    session: aiohttp.ClientSession
    asks: int = 0


_READER_CONTENT_TYPES = frozenset({"application/json", "application/problem+json"})


def _sender(content_type: str, server: str | None) -> str:
    return f"content type {content_type}" + (f" from server {server!r}" if server else "")


def _excerpt(content: bytes, limit: int = 120) -> str:
    """The start of a body, printable in a log line and a problem's detail."""
    text = content[:limit].decode("utf-8", "replace")
    return repr(text) + ("…" if len(content) > limit else "")


def _reader_answer(status: int, content: bytes) -> AppendOutcome | KJournalError | None:
    """The outcome, or the error the reader's problem stands for; None if the body is neither."""
    try:
        if status == 200:
            return append_outcome_from_out(AppendOutcomeOut.model_validate_json(content))
        return error_for_problem(Problem.model_validate_json(content))
    except ValidationError:
        return None
