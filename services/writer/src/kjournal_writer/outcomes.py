"""`ReaderOutcomes`: the writer learns each append's outcome from the reader service (over HTTP).

The writer has no Cassandra and does not follow Kafka, so it cannot know what the append rule
makes of its record (docs/concurrency.md); the reader's fold can. The questions of one topic
(and one caller's bearer token, which the reader checks for the same `journal:append` scope) go
together: `POST /v1/topics/{topic}/outcomes` carries every question waiting when a request
leaves, and its answer streams a line per question as the reader's fold decides it. At most
`max_requests` requests per topic and token are in flight; questions arriving meanwhile wait for
the next, so under load each request carries many (one request per append cost the writer a
millisecond of CPU and the reader more; docs/performance.md). A question's trace context goes
with it, so the reader's outcome span sits under the append's.

A request that does not reach the reader (refused, cut off, or answered by something else, as a
Service just created can be) is sent again after a pause, its questions each within their own
deadline: a question only reads what the log fixed, so asking twice is safe. When the reader
cannot tell in time, the append is in Kafka but its fate is unknown to the writer:
OutcomeUnknown (504), and the client's resend of the same append is answered as a replay or a
refusal, never stored twice.
"""

from __future__ import annotations

import asyncio
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field

import aiohttp
import orjson
from kjournal.aio import AsyncResource
from kjournal.api import OutcomeLineOut
from kjournal.api import Problem
from kjournal.api import append_outcome_from_out
from kjournal.api import error_for_problem
from kjournal.api import quote_segment
from kjournal.api.schemas import MAX_OUTCOME_QUESTIONS
from kjournal.api.schemas import NDJSON_CONTENT_TYPE
from kjournal.errors import JournalQuarantined
from kjournal.errors import KJournalError
from kjournal.errors import OutcomeUnknown
from kjournal.model import AppendOutcome
from kjournal.model import Key
from kjournal.spans import recording
from opentelemetry.propagate import inject
from pydantic import ValidationError
from yarl import URL

from kjournal_writer.settings import ReaderLinkSettings

__all__ = ["CALLER_AUTHORIZATION", "ReaderOutcomes"]

CALLER_AUTHORIZATION: ContextVar[str | None] = ContextVar(
    "kjournal_writer_caller_authorization", default=None
)
"""The `Authorization` header of the request being served, passed on to the reader."""

_PROBLEM_CONTENT_TYPE = "application/problem+json"
_FIRST_PAUSE_S = 0.05
_LONGEST_PAUSE_S = 1.0


@dataclass(eq=False, slots=True)
class _Question:
    key: Key
    offset: int
    trace: dict[str, str]
    answer: asyncio.Future[AppendOutcome]
    asked: int = 0
    """How many requests carried it and brought no answer (the reader not reached)."""
    unreached: str | None = None
    """Why the last of those brought none."""


@dataclass(eq=False)
class _Lane:
    """The questions of one topic and one caller token, and their requests in flight."""

    topic: str
    authorization: str | None
    waiting: deque[_Question] = field(default_factory=deque)
    in_flight: int = 0
    flush_scheduled: bool = False


@dataclass(eq=False)
class _Link:
    """An aiohttp session to the reader, and how many requests are in flight on it."""

    session: aiohttp.ClientSession
    requests: int = 0


class ReaderOutcomes(AsyncResource):
    """`kjournal.ports.AppendOutcomes` over the reader's HTTP API; open with `async with`."""

    def __init__(self, settings: ReaderLinkSettings, max_requests: int = 4) -> None:
        if not settings.url:
            raise ValueError("KJOURNAL_READER__URL is not set")
        self._url = settings.url.rstrip("/")
        self._timeout_s = settings.timeout_s
        self._max_requests = max_requests
        self._link: _Link | None = None
        self._retired: set[_Link] = set()
        self._lanes: dict[tuple[str, str | None], _Lane] = {}
        self._requests: set[asyncio.Task[None]] = set()

    def _new_link(self) -> _Link:
        timeout = aiohttp.ClientTimeout(total=self._timeout_s)
        return _Link(
            aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0))
        )

    async def open(self) -> None:
        self._link = self._new_link()

    async def close(self) -> None:
        for task in list(self._requests):
            task.cancel()
        await asyncio.gather(*self._requests, return_exceptions=True)
        links = [*self._retired, *([self._link] if self._link else [])]
        self._link, self._retired = None, set()
        for link in links:
            await link.session.close()

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        if self._link is None:
            raise RuntimeError("ReaderOutcomes is used outside `async with`")
        authorization = CALLER_AUTHORIZATION.get()
        lane = self._lanes.get((key.topic, authorization))
        if lane is None:
            lane = self._lanes[(key.topic, authorization)] = _Lane(key.topic, authorization)
        trace: dict[str, str] = {}
        if recording():
            inject(trace)
        question = _Question(key, offset, trace, asyncio.get_running_loop().create_future())
        lane.waiting.append(question)
        self._schedule(lane)
        try:
            async with asyncio.timeout(self._timeout_s):
                return await question.answer
        except TimeoutError:
            why = f" (asked {question.asked} times: {question.unreached})" if question.asked else ""
            raise OutcomeUnknown(
                f"the append of journal {key} landed at offset {offset}, but the reader at "
                f"{self._url} did not tell its outcome within {self._timeout_s} s{why}; "
                "resending the same append is safe"
            ) from None

    def _schedule(self, lane: _Lane) -> None:
        """Send the lane's waiting questions once this turn of the event loop has asked all it
        will (appends whose produce completed together ask together)."""
        if not lane.flush_scheduled:
            lane.flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush, lane)

    def _flush(self, lane: _Lane) -> None:
        lane.flush_scheduled = False
        link = self._link
        if link is None:
            return
        while lane.waiting and lane.in_flight < self._max_requests:
            batch = [
                lane.waiting.popleft() for _ in range(min(len(lane.waiting), MAX_OUTCOME_QUESTIONS))
            ]
            lane.in_flight += 1
            link.requests += 1
            task = asyncio.get_running_loop().create_task(self._ask(link, lane, batch))
            self._requests.add(task)
            task.add_done_callback(self._requests.discard)
        if not lane.waiting and not lane.in_flight:
            self._lanes.pop((lane.topic, lane.authorization), None)

    async def _ask(self, link: _Link, lane: _Lane, batch: list[_Question]) -> None:
        try:
            unreached = await self._reached(link, lane, batch)
            if unreached is not None:
                await self._ask_again_later(lane, batch, unreached)
        finally:
            self._fail(batch, f"the reader at {self._url} did not answer for it")
            lane.in_flight -= 1
            link.requests -= 1
            if link in self._retired and link.requests == 0:
                self._retired.discard(link)
                await link.session.close()
            if lane.waiting:
                self._schedule(lane)
            elif not lane.in_flight:
                self._lanes.pop((lane.topic, lane.authorization), None)

    async def _reached(self, link: _Link, lane: _Lane, batch: list[_Question]) -> str | None:
        """Sends the batch; why the reader was not reached, if it was not (asking again is
        safe then: a question only reads what the log fixed)."""
        try:
            return await self._request(link, lane, batch)
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            # not connected, or cut off before every answer came
            return f"{type(exc).__name__}: {exc}"
        except (TimeoutError, aiohttp.ClientError) as exc:
            self._fail(
                batch,
                f"the reader at {self._url} did not tell its outcome ({type(exc).__name__}: {exc})",
            )
            return None

    async def _ask_again_later(self, lane: _Lane, batch: list[_Question], why: str) -> None:
        """Puts the batch's unanswered questions back in line after a pause that doubles with
        each request that did not reach the reader (a Service that does not route yet, a
        reader restarting); each question still ends at its own deadline."""
        for question in batch:
            question.asked += 1
            question.unreached = why
        pause = min(_FIRST_PAUSE_S * 2 ** (min(q.asked for q in batch) - 1), _LONGEST_PAUSE_S)
        await asyncio.sleep(pause)
        unanswered = [question for question in batch if not question.answer.done()]
        batch.clear()
        lane.waiting.extendleft(reversed(unanswered))

    async def _request(self, link: _Link, lane: _Lane, batch: list[_Question]) -> str | None:
        """Asks the reader; what answered instead of it, if something else did."""
        headers = {"content-type": "application/json"}
        if lane.authorization:
            headers["authorization"] = lane.authorization
        body = orjson.dumps(
            {"appends": [{"id": q.key.id, "offset": q.offset, **q.trace} for q in batch]}
        )
        url = URL(f"{self._url}/v1/topics/{quote_segment(lane.topic)}/outcomes", encoded=True)
        async with link.session.post(
            url, data=body, headers=headers, allow_redirects=False
        ) as response:
            content_type = response.content_type
            if content_type == NDJSON_CONTENT_TYPE and response.status == 200:
                async for line in response.content:
                    self._answer_line(batch, line)
                return None
            if content_type != _PROBLEM_CONTENT_TYPE:
                response.close()
                self._retire(link)
                server = response.headers.get("server")
                sender = f"content type {content_type}" + (
                    f" from server {server!r}" if server else ""
                )
                return (
                    f"{self._url} answered {response.status} with {sender}, not a reader's answer"
                )
            self._fail_with_problem(batch, response.status, await response.read(), link)
            return None

    def _answer_line(self, batch: list[_Question], line: bytes) -> None:
        try:
            answer = OutcomeLineOut.model_validate_json(line)
        except ValidationError:
            return  # a line no reader sends: its question is failed when the stream ends
        if not 0 <= answer.i < len(batch):
            return
        question = batch[answer.i]
        if question.answer.done():
            return
        if answer.outcome is not None:
            question.answer.set_result(append_outcome_from_out(answer.outcome))
        elif answer.problem is not None:
            question.answer.set_exception(
                _unknown_unless_told(
                    question, error_for_problem(answer.problem), answer.problem.status
                )
            )

    def _fail_with_problem(
        self, batch: list[_Question], status: int, content: bytes, link: _Link
    ) -> None:
        try:
            error = error_for_problem(Problem.model_validate_json(content))
        except ValidationError:
            self._retire(link)
            self._fail(
                batch, f"the reader answered {status} with a body this writer does not understand"
            )
            return
        for question in batch:
            if not question.answer.done():
                question.answer.set_exception(_unknown_unless_told(question, error, status))

    def _fail(self, batch: list[_Question], why: str) -> None:
        for question in batch:
            if not question.answer.done():
                question.answer.set_exception(
                    OutcomeUnknown(
                        f"the append of journal {question.key} landed at offset "
                        f"{question.offset}, but {why}; resending the same append is safe"
                    )
                )

    def _retire(self, link: _Link) -> None:
        """Something other than the reader answered on one of the link's kept-alive connections
        (e.g. a proxy that took it while the reader's Service did not route yet): later asks go
        over a new link, and this one closes once its requests in flight are answered."""
        if link is self._link:
            self._retired.add(link)
            self._link = self._new_link()


def _unknown_unless_told(question: _Question, error: KJournalError, status: int) -> KJournalError:
    """What the writer raises for a reader's problem: a quarantine or an outcome the reader
    could not tell as they are, anything else as an outcome unknown."""
    if isinstance(error, JournalQuarantined | OutcomeUnknown):
        return error
    unknown = OutcomeUnknown(
        f"the append of journal {question.key} landed at offset {question.offset}, but the "
        f"reader answered {status} for its outcome: {error}; resending the same append is safe"
    )
    unknown.__cause__ = error
    return unknown
