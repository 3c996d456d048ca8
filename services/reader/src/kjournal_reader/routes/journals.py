"""Reading one journal: its events (streamed NDJSON), its pointer and its status."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from kjournal.api.conditions import entity_tag
from kjournal.api.convert import event_record_to_json, journal_status_out
from kjournal.errors import JournalNotFound
from kjournal.model import SEQ_NR_MAX
from kjournal.spans import conventions as sem
from kjournal_service.auth import Scope, requires
from kjournal_service.deps import HttpDep
from kjournal_service.ndjson import prefetch
from kjournal_service.problems import problem_responses

from kjournal_reader.deps import JournalDep, StreamSlotDep
from kjournal_reader.schemas import (
    FromQuery,
    JournalStatusOut,
    LimitQuery,
    PointerOut,
    ToQuery,
)
from kjournal_reader.streams import ndjson_response, ndjson_responses

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
    journal: JournalDep,
    http: HttpDep,
    slot: StreamSlotDep,  # held until the answer is streamed
    from_: FromQuery = 1,
    to: ToQuery = SEQ_NR_MAX,
    limit: LimitQuery = None,
) -> StreamingResponse:
    # from > to is an empty range: no events (the journal must still exist, as for any range)
    view = await journal.view()
    records = await prefetch(journal.events(view, from_, to, limit))
    response = ndjson_response(request, http, records, event_record_to_json, sem.EVENTS)
    response.headers["etag"] = entity_tag(view.info.seq_nr)
    return response


@router.get(
    "/{topic}/{id}/pointer",
    response_model=PointerOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary='The journal\'s last seqNr (404 if there is no such journal); ETag: "<seqNr>"',
)
@requires(Scope.READ)
async def pointer(journal: JournalDep, response: Response) -> PointerOut:
    seq_nr = await journal.pointer()
    if seq_nr is None:
        raise JournalNotFound(f"journal {journal.key} does not exist")
    response.headers["etag"] = entity_tag(seq_nr)
    return PointerOut(seq_nr=seq_nr)


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
