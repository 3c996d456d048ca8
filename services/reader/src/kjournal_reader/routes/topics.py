"""Topic-wide views: the journals a topic holds (streamed) and its replication progress."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from kjournal.api.convert import replication_out
from kjournal.replication_status import record_lag
from kjournal_service.auth import Scope, requires
from kjournal_service.deps import HttpDep, JournalsDep, MetricsDep, TopicDep
from kjournal_service.ndjson import prefetch
from kjournal_service.problems import problem_responses

from kjournal_reader.deps import EventualDep, StreamSlotDep
from kjournal_reader.schemas import ReplicationOut
from kjournal_reader.streams import ndjson_response, ndjson_responses

router = APIRouter(prefix="/v1/topics", tags=["topics"])

IDS_STREAM = ndjson_responses(
    "JournalIdOut",
    'one {"id": ...} per line, in no particular order (journals with a head in Cassandra)',
)


@router.get(
    "/{topic}/journals",
    response_class=StreamingResponse,
    responses=IDS_STREAM,
    summary="Stream the ids of the topic's replicated journals",
)
@requires(Scope.READ)
async def journals(
    request: Request,
    topic: TopicDep,
    journals: JournalsDep,
    eventual: EventualDep,
    http: HttpDep,
    slot: StreamSlotDep,  # held until the answer is streamed
) -> StreamingResponse:
    await journals.topics.count(topic)  # UnknownTopic → 404, as for every other route
    ids = await prefetch(eventual.ids(topic))
    return ndjson_response(request, http, ids, lambda id_: {"id": id_})


@router.get(
    "/{topic}/replication",
    response_model=ReplicationOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Per partition: Kafka's offsets, pointer2 and how many records are not yet replicated",
)
@requires(Scope.ADMIN)
async def replication(
    topic: TopicDep, journals: JournalsDep, metrics: MetricsDep
) -> ReplicationOut:
    status = await journals.replication(topic)
    record_lag(metrics, status)
    return replication_out(status)
