"""Journal actions: append, delete, purge, mark. Each produces one Kafka record and answers once
the broker has acknowledged it; a request that fails validation produces nothing."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from fastapi import Request
from fastapi import Response
from kjournal.api.conditions import entity_tag
from kjournal.api.conditions import parse_condition
from kjournal.api.convert import append_response_json
from kjournal.metrics.catalogue import WRITER_EVENTS
from kjournal_service.auth import Scope
from kjournal_service.auth import requires
from kjournal_service.problems import problem_responses

from kjournal_writer.append_body import read_append
from kjournal_writer.deps import JournalDep
from kjournal_writer.deps import openapi_request_body
from kjournal_writer.deps import parse_json_body
from kjournal_writer.outcomes import CALLER_AUTHORIZATION
from kjournal_writer.schemas import AppendRequest
from kjournal_writer.schemas import AppendResponse
from kjournal_writer.schemas import IdPath
from kjournal_writer.schemas import MarkRequest
from kjournal_writer.schemas import MarkResponse
from kjournal_writer.schemas import PositionOut
from kjournal_writer.schemas import TopicPath
from kjournal_writer.schemas import ToQuery
from kjournal_writer.state import WriterState

router = APIRouter(prefix="/v1/journals", tags=["journals"])

APPEND_DESCRIPTION = """The record is produced, then the writer learns from the reader what the
journal's append rule made of it (docs/concurrency.md), and answers:

* **201**: the journal took the append; every reader returns its events from now on.
* **200** with `"replay": true`: the journal already held these same events (an identical earlier
  append, such as a retry); nothing changed; the body names the copy readers return.
* **409** `append-conflict`: the journal holds these seqNrs with other content.
* **409** `seq-nr-gap`: the append skips more than 100,000 seqNrs above the journal's seqNr.
* **412** `condition-failed`: `If-Match` / `If-None-Match` did not hold.
* **504** `outcome-unknown`: the outcome could not be learned in time; resending the same append
  is safe.

Every answer but a problem carries `ETag: "<seqNr>"`, the journal's seqNr after the append.
"""

CONDITION_PARAMETERS = [
    {
        "name": "If-Match",
        "in": "header",
        "required": False,
        "description": 'Append only if the journal is at this seqNr: `"<seqNr>"` as the ETag '
        'of its pointer gives it (`"0"`: the journal must not exist). The first event must then '
        "be seqNr + 1. Otherwise 412, and nothing of the append is ever read.",
        "schema": {
            "type": "string",
            "pattern": '^("(0|[1-9][0-9]{0,17})"|0|[1-9][0-9]{0,17})$',
            # "0" (not there yet), not "5": schemathesis sends the example to a journal the
            # run has not written, and an example that can only get 412 reads as a schema
            # that does not match the API (tests/integration/services/fuzz/hooks.py).
            "example": '"0"',
        },
    },
    {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "description": "`*`: append only if the journal does not exist (never written, or "
        "purged). Otherwise 412.",
        "schema": {"type": "string", "enum": ["*"]},
    },
]


@router.post(
    "/{topic}/{id}/events",
    status_code=201,
    response_model=AppendResponse,
    responses={
        **problem_responses(400, 404, 409, 412, 413, 415, 500, 503, 504),
        200: {
            "description": "A replay: the journal already held these events (an identical "
            "append, e.g. a retry); the body names the copy readers return",
            "model": AppendResponse,
        },
    },
    summary="Append events atomically (one Kafka record: all or none)",
    description=APPEND_DESCRIPTION,
    openapi_extra={**openapi_request_body(AppendRequest), "parameters": CONDITION_PARAMETERS},
)
@requires(Scope.APPEND)
async def append(request: Request, topic: TopicPath, id: IdPath) -> Response:
    # The hot path (served by kjournal_service.hot_routes, past FastAPI's routing and dependency
    # solving): the body parsed straight from bytes by pydantic-core, the answer written directly.
    state = WriterState.of(request.app)
    journal = state.journal(topic, id)
    headers = request.headers
    expect = parse_condition(headers.get("if-match"), headers.get("if-none-match"))
    http = state.settings.http
    args = await read_append(
        request, http.max_events_per_append, http.max_json_depth, http.offload_body_bytes
    )
    caller = CALLER_AUTHORIZATION.set(headers.get("authorization"))
    try:
        result = await journal.append(args.events, args.metadata, args.headers, expect=expect)
    finally:
        CALLER_AUTHORIZATION.reset(caller)
    if not result.replay:
        state.metrics.increment(
            WRITER_EVENTS.name, len(args.events.events), topic=journal.key.topic
        )
    return Response(
        append_response_json(result),
        200 if result.replay else 201,
        headers={"etag": entity_tag(result.journal_seq_nr)},
        media_type="application/json",
    )


@router.delete(
    "/{topic}/{id}/events",
    status_code=202,
    response_model=PositionOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Delete events with seqNr ≤ to (never future ones)",
)
@requires(Scope.DELETE)
async def delete(journal: JournalDep, to: ToQuery) -> PositionOut:
    position = await journal.delete(to)  # as asked: readers and the replicator clamp it
    return PositionOut(partition=position.partition, offset=position.offset)


@router.delete(
    "/{topic}/{id}",
    status_code=202,
    response_model=PositionOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Purge the journal; the next append starts a new one",
)
@requires(Scope.DELETE)
async def purge(journal: JournalDep) -> PositionOut:
    position = await journal.purge()
    return PositionOut(partition=position.partition, offset=position.offset)


@router.post(
    "/{topic}/{id}/marks",
    status_code=201,
    response_model=MarkResponse,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Write a mark: a barrier record with no storage effect",
    openapi_extra=openapi_request_body(MarkRequest, required=False),
)
@requires(Scope.APPEND)
async def mark(request: Request, journal: JournalDep) -> MarkResponse:
    body = await parse_json_body(request, MarkRequest, required=False)
    mark_id = (body.id if body is not None else None) or str(uuid.uuid4())
    position = await journal.mark(mark_id)
    return MarkResponse(id=mark_id, partition=position.partition, offset=position.offset)
