"""Journal actions: append, delete, purge, mark. Each produces one Kafka record and answers once
the broker has acknowledged it; a request that fails validation produces nothing."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request, Response
from kjournal.api.convert import append_response_json
from kjournal.errors import JournalNotFound
from kjournal_service.auth import Scope, requires
from kjournal_service.deps import JournalDep, journal_of, metrics_of
from kjournal_service.problems import problem_responses

from kjournal_writer.append_body import read_append
from kjournal_writer.deps import json_body, parse_json_body
from kjournal_writer.schemas import (
    AppendRequest,
    AppendResponse,
    IdPath,
    MarkRequest,
    MarkResponse,
    PositionOut,
    TopicPath,
    ToQuery,
)
from kjournal_writer.settings import WriterHttpSettings

router = APIRouter(prefix="/v1/journals", tags=["journals"])


@router.post(
    "/{topic}/{id}/events",
    status_code=201,
    response_model=AppendResponse,
    responses=problem_responses(400, 404, 413, 415, 500, 503, 504),
    summary="Append events atomically (one Kafka record: all or none)",
    openapi_extra=json_body(AppendRequest),
)
@requires(Scope.APPEND)
async def append(request: Request, topic: TopicPath, id: IdPath) -> Response:
    # The hot path (served by kjournal_service.hot_routes, past FastAPI's routing and dependency
    # solving): the body parsed straight from bytes by pydantic-core, the answer written directly.
    journal = journal_of(request, topic, id)
    http: WriterHttpSettings = request.app.state.settings.http
    args = await read_append(
        request, http.max_events_per_append, http.max_json_depth, http.offload_body_bytes
    )
    result = await journal.append(args.events, args.metadata, args.headers)
    metrics_of(request).increment(
        "kjournal_writer_events_total", len(args.events.events), topic=journal.key.topic
    )
    return Response(append_response_json(result), 201, media_type="application/json")


@router.delete(
    "/{topic}/{id}/events",
    status_code=202,
    response_model=PositionOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Delete events with seqNr ≤ to (never future ones)",
)
@requires(Scope.DELETE)
async def delete(journal: JournalDep, to: ToQuery) -> PositionOut:
    position = await journal.delete(to)
    if position is None:  # only a Journals with reads checks existence first
        raise JournalNotFound(f"journal {journal.key} does not exist")
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
    openapi_extra=json_body(MarkRequest, required=False),
)
@requires(Scope.APPEND)
async def mark(request: Request, journal: JournalDep) -> MarkResponse:
    body = await parse_json_body(request, MarkRequest, required=False)
    mark_id = (body.id if body is not None else None) or str(uuid.uuid4())
    position = await journal.mark(mark_id)
    return MarkResponse(id=mark_id, partition=position.partition, offset=position.offset)
