"""Reading one journal: its events (streamed NDJSON), its pointer and its status."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from kjournal.api.convert import event_record_to_json, journal_status_out
from kjournal.api.ndjson import NDJSON_CONTENT_TYPE, ndjson_chunks, prefetch
from kjournal.api.problems import problem_responses
from kjournal.errors import InvalidSeqNr, JournalNotFound

from kjournal_reader.deps import JournalDep, SettingsDep
from kjournal_reader.problems import stream_problem
from kjournal_reader.schemas import (
    SEQ_NR_LIMIT,
    FromQuery,
    JournalStatusOut,
    LimitQuery,
    PointerOut,
    ToQuery,
)

router = APIRouter(prefix="/v1/journals", tags=["journals"])

EVENTS_STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "one EventOut per line, in seqNr order; a stream broken after it began "
        'ends with a line {"problem": {...}} instead',
        "content": {NDJSON_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/EventOut"}}},
    }
}


@router.get(
    "/{topic}/{id}/events",
    response_class=StreamingResponse,
    responses={**EVENTS_STREAM, **problem_responses(400, 404, 500, 503, 504)},
    summary="Stream the journal's events from Cassandra and the unreplicated Kafka head",
)
async def events(
    request: Request,
    journal: JournalDep,
    settings: SettingsDep,
    from_: FromQuery = 1,
    to: ToQuery = SEQ_NR_LIMIT,
    limit: LimitQuery = None,
) -> StreamingResponse:
    if from_ > to:
        raise InvalidSeqNr(f"from ({from_}) is after to ({to})")
    records = await prefetch(journal.read(from_, to, limit))
    path = request.url.path

    def on_error(exc: Exception) -> dict[str, Any]:
        return stream_problem(exc, "GET", path)

    return StreamingResponse(
        ndjson_chunks(records, event_record_to_json, settings.http.stream_chunk_bytes, on_error),
        media_type=NDJSON_CONTENT_TYPE,
    )


@router.get(
    "/{topic}/{id}/pointer",
    response_model=PointerOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="The journal's last seqNr (404 if there is no such journal)",
)
async def pointer(journal: JournalDep) -> PointerOut:
    seq_nr = await journal.pointer()
    if seq_nr is None:
        raise JournalNotFound(f"journal {journal.key} does not exist")
    return PointerOut(seq_nr=seq_nr)


@router.get(
    "/{topic}/{id}",
    response_model=JournalStatusOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="The journal's head, and how much of it is still only in Kafka",
)
async def status(journal: JournalDep) -> JournalStatusOut:
    current = await journal.status()
    if current.seq_nr is None:
        raise JournalNotFound(f"journal {journal.key} does not exist")
    return journal_status_out(current)
