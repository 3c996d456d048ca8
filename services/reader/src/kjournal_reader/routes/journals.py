"""Reading one journal: its events (streamed NDJSON), its pointer and its status. The events and
the pointer are hot routes (served past FastAPI's routing: kjournal_service/hot_routes.py)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter
from fastapi import Request
from fastapi import Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from kjournal.api.conditions import entity_tag
from kjournal.api.convert import event_record_to_json
from kjournal.api.convert import journal_status_out
from kjournal.errors import JournalNotFound
from kjournal.model import SEQ_NR_MAX
from kjournal.spans import conventions as sem
from kjournal_service.auth import Scope
from kjournal_service.auth import requires
from kjournal_service.hot_routes import served_by
from kjournal_service.ndjson import first_chunk
from kjournal_service.params import IdPath
from kjournal_service.params import TopicPath
from kjournal_service.problems import problem_responses
from pydantic import TypeAdapter
from pydantic import ValidationError
from starlette.background import BackgroundTask
from starlette.datastructures import QueryParams

from kjournal_reader.deps import JournalDep
from kjournal_reader.schemas import FromQuery
from kjournal_reader.schemas import JournalStatusOut
from kjournal_reader.schemas import LimitQuery
from kjournal_reader.schemas import PointerOut
from kjournal_reader.schemas import ToQuery
from kjournal_reader.state import ReaderState
from kjournal_reader.streams import ndjson_responses
from kjournal_reader.streams import whole_or_streamed

router = APIRouter(prefix="/v1/journals", tags=["journals"])

EVENTS_STREAM = ndjson_responses(
    "EventOut",
    "one EventOut per line, in seqNr order; a stream broken after it began "
    'ends with a line {"problem": {...}} instead',
)


@router.get(
    "/{topic}/{id}/events",
    response_class=StreamingResponse,
    responses=EVENTS_STREAM,
    summary="Stream the journal's events from Cassandra and the unreplicated Kafka tail",
)
@requires(Scope.READ)
async def events(
    request: Request,
    topic: TopicPath,
    id: IdPath,
    from_: FromQuery = 1,
    to: ToQuery = SEQ_NR_MAX,
    limit: LimitQuery = None,
) -> Response:
    """Served hot by `serve_events` (this signature documents the route)."""
    return await serve_events(request, topic, id)


@served_by(events)
async def serve_events(request: Request, topic: str, id: str) -> Response:
    state = ReaderState.of(request.app)
    journal = state.journal(topic, id)
    from_, to, limit = _range(request.query_params)
    slot = state.stream_slots.take()  # held until the answer is streamed, or abandoned
    try:
        # from > to is an empty range: no events (the journal must still exist, as for any range)
        view = await journal.view()
        events = journal.events(view, from_, to, limit)
        first = await first_chunk(events, event_record_to_json, state.http.stream_chunk_bytes)
    except BaseException:
        slot.release()
        raise
    response = whole_or_streamed(request, state.http, first, event_record_to_json, sem.EVENTS)
    response.background = BackgroundTask(slot.released)
    response.headers["etag"] = entity_tag(view.info.seq_nr)
    return response


@router.get(
    "/{topic}/{id}/pointer",
    response_model=PointerOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary='The journal\'s last seqNr (404 if there is no such journal); ETag: "<seqNr>"',
)
@requires(Scope.READ)
async def pointer(request: Request, topic: TopicPath, id: IdPath) -> Response:
    """Served hot by `serve_pointer` (this signature documents the route)."""
    return await serve_pointer(request, topic, id)


@served_by(pointer)
async def serve_pointer(request: Request, topic: str, id: str) -> Response:
    journal = ReaderState.of(request.app).journal(topic, id)
    seq_nr = await journal.pointer()
    if seq_nr is None:
        raise JournalNotFound(f"journal {journal.key} does not exist")
    return Response(
        orjson.dumps({"seqNr": seq_nr}),
        headers={"etag": entity_tag(seq_nr)},
        media_type="application/json",
    )


_FROM: TypeAdapter[int] = TypeAdapter(FromQuery)
_TO: TypeAdapter[int] = TypeAdapter(ToQuery)
_LIMIT: TypeAdapter[int | None] = TypeAdapter(LimitQuery)


def _range(query: QueryParams) -> tuple[int, int, int | None]:
    """`from`, `to` and `limit` as the route's declared types take them (the hot route's
    validation, as FastAPI's would be)."""
    errors: list[dict[str, Any]] = []
    values: list[Any] = []
    for name, adapter, default in (
        ("from", _FROM, 1),
        ("to", _TO, SEQ_NR_MAX),
        ("limit", _LIMIT, None),
    ):
        raw = query.get(name)
        if raw is None:
            values.append(default)
            continue
        try:
            values.append(adapter.validate_python(raw))
        except ValidationError as exc:
            errors += [{**error, "loc": ("query", name)} for error in exc.errors()]
    if errors:
        raise RequestValidationError(errors)
    return values[0], values[1], values[2]


@router.get(
    "/{topic}/{id}",
    response_model=JournalStatusOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary='The journal\'s head, and how much of it is still only in Kafka; ETag: "<seqNr>"',
)
@requires(Scope.READ)
async def status(journal: JournalDep, response: Response) -> JournalStatusOut:
    current = await journal.status()
    if current.seq_nr is None:
        raise JournalNotFound(f"journal {journal.key} does not exist")
    response.headers["etag"] = entity_tag(current.seq_nr)
    return journal_status_out(current)
