"""Topic-wide views: the journals a topic holds (streamed), its feed of every journal's events
(docs/feed.md) and its replication progress."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request
from fastapi.responses import StreamingResponse
from kjournal.api.convert import replication_out
from kjournal.feed import AppendEvents
from kjournal.feed import AppendLines
from kjournal.feed import Cursor
from kjournal.feed import FeedRequest
from kjournal.feed import RecordEntries
from kjournal.feed import entry_to_json
from kjournal.replication_status import record_lag
from kjournal_service.auth import Scope
from kjournal_service.auth import requires
from kjournal_service.deps import HttpDep
from kjournal_service.deps import MetricsDep
from kjournal_service.deps import TopicDep
from kjournal_service.ndjson import Lines
from kjournal_service.ndjson import ndjson_line
from kjournal_service.ndjson import ndjson_lines_sharing
from kjournal_service.ndjson import prefetch
from kjournal_service.problems import problem_responses

from kjournal_reader.deps import EventualDep
from kjournal_reader.deps import ReadsDep
from kjournal_reader.deps import StreamSlotDep
from kjournal_reader.schemas import AfterQuery
from kjournal_reader.schemas import FeedFromQuery
from kjournal_reader.schemas import HeartbeatQuery
from kjournal_reader.schemas import IdPrefixQuery
from kjournal_reader.schemas import LastEventIdHeader
from kjournal_reader.schemas import PartitionsQuery
from kjournal_reader.schemas import ReplicationOut
from kjournal_reader.schemas import TagQuery
from kjournal_reader.streams import EVENT_STREAM_CONTENT_TYPE
from kjournal_reader.streams import event_stream_response
from kjournal_reader.streams import ndjson_response
from kjournal_reader.streams import ndjson_responses

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
    reads: ReadsDep,
    eventual: EventualDep,
    http: HttpDep,
    slot: StreamSlotDep,  # held until the answer is streamed
) -> StreamingResponse:
    await reads.topics.count(topic)  # UnknownTopic → 404, as for every other route
    ids = await prefetch(eventual.ids(topic))
    return ndjson_response(request, http, ids, lambda id_: {"id": id_})


FEED_STREAM = {
    **ndjson_responses(
        "FeedEntryOut",
        "application/x-ndjson (a catch-up): one FeedEntryOut per line, each partition in offset "
        'order up to its end as of the request, then {"type": "end", "cursor": ...}; a stream '
        'broken after it began ends with a line {"problem": {...}} instead. '
        "text/event-stream (Accept: text/event-stream; a live tail without end): events whose "
        "`event` is the entry's type (or heartbeat), `id` its cursor and `data` the FeedEntryOut",
    ),
    **problem_responses(410),
}
FEED_STREAM[200]["content"][EVENT_STREAM_CONTENT_TYPE] = {"schema": {"type": "string"}}


@router.get(
    "/{topic}/events",
    response_class=StreamingResponse,
    responses=FEED_STREAM,
    summary="Stream every journal's events of the topic, with deletes and purges, from a cursor",
)
@requires(Scope.READ)
async def feed(
    request: Request,
    topic: TopicDep,
    reads: ReadsDep,
    http: HttpDep,
    slot: StreamSlotDep,  # held until the answer is streamed
    after: AfterQuery = None,
    from_: FeedFromQuery = "start",
    partitions: PartitionsQuery = None,
    tag: TagQuery = None,
    id_prefix: IdPrefixQuery = None,
    heartbeat: HeartbeatQuery = 15.0,
    last_event_id: LastEventIdHeader = None,
) -> StreamingResponse:
    live = EVENT_STREAM_CONTENT_TYPE in request.headers.get("accept", "")
    if after is None and live:
        after = last_event_id
    wanted = FeedRequest(
        topic,
        after=None if after is None else Cursor.decode(after),
        from_end=from_ == "end",
        partitions=None if partitions is None else [int(p) for p in partitions.split(",")],
        tags=frozenset(tag or ()),
        id_prefix=id_prefix or "",
    )
    topic_feed = reads.feed()
    plan = await topic_feed.plan(wanted)  # bad cursors, 410s: problems before the stream starts
    if live:
        return event_stream_response(request, topic_feed.follow(plan, heartbeat), entry_to_json)
    entries = await prefetch(topic_feed.record_entries(plan))
    return ndjson_response(request, http, entries, _feed_lines)


def _feed_lines(entries: RecordEntries) -> Lines:
    """A record's feed lines: an append's events with their record's members encoded once."""
    if isinstance(entries, AppendEvents | AppendLines):
        return Lines(ndjson_lines_sharing(*entries.lines_json()), len(entries))
    return Lines(b"".join(ndjson_line(entry_to_json(entry)) for entry in entries), len(entries))


@router.get(
    "/{topic}/replication",
    response_model=ReplicationOut,
    responses=problem_responses(400, 404, 500, 503, 504),
    summary="Per partition: Kafka's offsets, pointer2 and how many records are not yet replicated",
)
@requires(Scope.ADMIN)
async def replication(topic: TopicDep, reads: ReadsDep, metrics: MetricsDep) -> ReplicationOut:
    status = await reads.replication(topic)
    record_lag(metrics, status)
    return replication_out(status)
