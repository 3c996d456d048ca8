"""Appends' outcomes: what the journal's append rule made of an append (the writer asks before it
answers; docs/concurrency.md). One question a request (`GET .../appends/{offset}`), or many of
one topic in one request whose answer streams a line per question as each outcome is decided
(`POST /v1/topics/{topic}/outcomes`: the writer's way, served past FastAPI's routing)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextvars import copy_context

import orjson
from fastapi import APIRouter
from fastapi import HTTPException
from fastapi import Request
from fastapi import Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from kjournal.api.convert import append_outcome_json
from kjournal.api.convert import append_outcome_out
from kjournal.api.keys import KeyRules
from kjournal.api.problems import problem_for_error
from kjournal.api.schemas import NDJSON_CONTENT_TYPE
from kjournal.api.schemas import AppendOutcomeOut
from kjournal.api.schemas import OutcomeLineOut
from kjournal.api.schemas import OutcomeQuestionIn
from kjournal.api.schemas import OutcomesRequest
from kjournal.errors import KJournalError
from kjournal.errors import OutcomeUnknown
from kjournal.model import AppendOutcome
from kjournal.model import Key
from kjournal.read.outcome import LocalOutcomes
from kjournal.spans import conventions as sem
from kjournal.spans import span
from kjournal_service.auth import Scope
from kjournal_service.auth import requires
from kjournal_service.params import TopicPath
from kjournal_service.problems import problem_responses
from opentelemetry import context as otel_context
from opentelemetry.propagate import extract
from pydantic import ValidationError

from kjournal_reader.deps import JournalDep
from kjournal_reader.deps import outcomes_of
from kjournal_reader.schemas import OffsetPath
from kjournal_reader.state import ReaderState

__all__ = ["OPENAPI_MODELS", "journal_router", "outcomes", "topic_router"]

log = logging.getLogger(__name__)

journal_router = APIRouter(prefix="/v1/journals", tags=["journals"])
topic_router = APIRouter(prefix="/v1/topics", tags=["topics"])


@journal_router.get(
    "/{topic}/{id}/appends/{offset}",
    response_model=AppendOutcomeOut,
    responses=problem_responses(400, 403, 404, 500, 503, 504),
    summary="What the journal's append rule made of its append at this offset (the writer asks "
    "before it answers an append; docs/concurrency.md)",
)
@requires(Scope.APPEND)
async def append_outcome(journal: JournalDep, offset: OffsetPath) -> AppendOutcomeOut:
    return append_outcome_out(await journal.outcome(offset))


@topic_router.post(
    "/{topic}/outcomes",
    response_class=StreamingResponse,
    responses={
        **problem_responses(400, 403, 415, 500, 503),
        200: {
            "description": "one OutcomeLineOut per question, in the order the outcomes are "
            "decided: its index `i` and its `outcome`, or the `problem` that kept it from being "
            "told (the one `GET .../appends/{offset}` would answer)",
            "content": {
                NDJSON_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/OutcomeLineOut"}}
            },
        },
    },
    summary="The outcomes of many appends of one topic, streamed as each is decided",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/OutcomesRequest"}}
            },
        }
    },
)
@requires(Scope.APPEND)
async def outcomes(request: Request, topic: TopicPath) -> Response:
    key_rules = ReaderState.of(request.app).key_rules
    checked_topic = key_rules.topic(topic)
    if "json" not in request.headers.get("content-type", ""):
        raise HTTPException(415, "expected an application/json body")
    questions = _questions(await request.body())
    answers = _Answers(outcomes_of(request), key_rules, checked_topic, questions)
    first = await answers.first()
    if answers.finished:
        # Every answer came with the first (one question, or all decided already): one body
        # with its length, without a streamed response to set up, watch and end.
        return Response(first, media_type=NDJSON_CONTENT_TYPE)
    return StreamingResponse(answers.rest(first), media_type=NDJSON_CONTENT_TYPE)


def _questions(body: bytes) -> list[OutcomeQuestionIn]:
    try:
        return OutcomesRequest.model_validate_json(body).appends
    except ValidationError as exc:
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
        ) from None


class _Answers:
    """The answers to one request's questions: those decided already at once, the others as
    their outcomes come (each in a task of its own, cancelled if the writer goes away). `first`
    asks them all and waits for the first answers; `rest` streams those and the ones after."""

    def __init__(
        self,
        outcomes: LocalOutcomes,
        key_rules: KeyRules,
        topic: str,
        questions: list[OutcomeQuestionIn],
    ) -> None:
        self._outcomes = outcomes
        self._key_rules = key_rules
        self._topic = topic
        self._questions = questions
        self._ready: list[bytes] = []
        self._arrived = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()

    async def first(self) -> bytes:
        """The lines of the answers ready once any is (at once for outcomes decided already)."""
        try:
            self._ask_all()
            while not self._ready and self._tasks:
                await self._arrived.wait()
                self._arrived.clear()
        except BaseException:
            self._cancel()
            raise
        chunk, self._ready = b"".join(self._ready), []
        return chunk

    @property
    def finished(self) -> bool:
        """Whether every question has its line in what `first` (or `rest`) gave."""
        return not self._tasks and not self._ready

    async def rest(self, first: bytes) -> AsyncGenerator[bytes, None]:
        """`first`, then the lines of the answers still to come, as they come."""
        try:
            yield first
            while self._tasks or self._ready:
                if not self._ready:
                    await self._arrived.wait()
                    self._arrived.clear()
                if self._ready:
                    chunk, self._ready = b"".join(self._ready), []
                    yield chunk
        finally:
            self._cancel()

    def _cancel(self) -> None:
        for task in self._tasks:
            task.cancel()

    def _ask_all(self) -> None:
        for index, question in enumerate(self._questions):
            try:
                key = self._key_rules.key_in(self._topic, question.id)
                known = self._outcomes.known(key, question.offset)
            except KJournalError as exc:
                self._ready.append(_problem_line(index, exc))
                continue
            if known is not None and question.traceparent is None:
                self._ready.append(_outcome_line(index, known))
                continue
            context = copy_context()
            if question.traceparent is not None:
                carrier = {"traceparent": question.traceparent}
                if question.tracestate is not None:
                    carrier["tracestate"] = question.tracestate
                context.run(otel_context.attach, extract(carrier))
            task = asyncio.get_running_loop().create_task(
                self._answer(index, key, question.offset), context=context
            )
            self._tasks.add(task)
            task.add_done_callback(self._done)

    async def _answer(self, index: int, key: Key, offset: int) -> None:
        try:
            with span(sem.SPAN_APPEND_OUTCOME):
                outcome = await self._outcomes.outcome(key, offset)
        except KJournalError as exc:
            self._ready.append(_problem_line(index, exc))
        except Exception as exc:  # a line for every question, whatever failed
            log.exception("the outcome of %s at offset %d failed", key, offset)
            unknown = OutcomeUnknown(f"the reader could not tell the outcome: {exc}")
            self._ready.append(_problem_line(index, unknown))
        else:
            self._ready.append(_outcome_line(index, outcome))

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._arrived.set()


def _outcome_line(index: int, outcome: AppendOutcome) -> bytes:
    return orjson.dumps(
        {"i": index, "outcome": append_outcome_json(outcome)}, option=orjson.OPT_APPEND_NEWLINE
    )


def _problem_line(index: int, error: KJournalError) -> bytes:
    problem = problem_for_error(error).model_dump(mode="json", by_alias=True, exclude_none=True)
    return orjson.dumps({"i": index, "problem": problem}, option=orjson.OPT_APPEND_NEWLINE)


# Documented for the OpenAPI components (the answer's lines, and the request body: a schema of
# its own inlined into the operation would carry `$defs` references nothing resolves).
OPENAPI_MODELS = (OutcomeLineOut, OutcomesRequest)
