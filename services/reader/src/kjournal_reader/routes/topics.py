"""Topic-wide views: the journals a topic holds (streamed) and its replication progress."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from kjournal.api.ndjson import NDJSON_CONTENT_TYPE, ndjson_chunks, prefetch
from kjournal.api.problems import problem_responses

from kjournal_reader.deps import EventualDep, ReplicationDep, SettingsDep, TopicDep, TopicsDep
from kjournal_reader.problems import stream_problem
from kjournal_reader.schemas import ReplicationOut

router = APIRouter(prefix="/v1/topics", tags=["topics"])

IDS_STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "description": 'one {"id": ...} per line, in no particular order (journals with a head '
        "in Cassandra)",
        "content": {NDJSON_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/JournalIdOut"}}},
    }
}


@router.get(
    "/{topic}/journals",
    response_class=StreamingResponse,
    responses={**IDS_STREAM, **problem_responses(400, 404, 500, 503, 504)},
    summary="Stream the ids of the topic's replicated journals",
)
async def journals(
    request: Request,
    topic: TopicDep,
    topics: TopicsDep,
    eventual: EventualDep,
    settings: SettingsDep,
) -> StreamingResponse:
    await topics.count(topic)  # UnknownTopic → 404, as for every other route
    ids = await prefetch(eventual.ids(topic))
    path = request.url.path

    def on_error(exc: Exception) -> dict[str, Any]:
        return stream_problem(exc, "GET", path)

    return StreamingResponse(
        ndjson_chunks(ids, lambda id_: {"id": id_}, settings.http.stream_chunk_bytes, on_error),
        media_type=NDJSON_CONTENT_TYPE,
    )


@router.get(
    "/{topic}/replication",
    response_model=ReplicationOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Per partition: end offset, pointer2 and how many records are not yet replicated",
)
async def replication(topic: TopicDep, view: ReplicationDep) -> ReplicationOut:
    return await view.status(topic)
