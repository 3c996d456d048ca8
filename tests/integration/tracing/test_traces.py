"""One trace, end to end, as the real OpenTelemetry Collector received it: a client's append
through the writer into Kafka, its replication by Spark into Cassandra (linked, in the replicator's
own trace), and a read through the reader. Malformed trace contexts, in a request or in a record,
start new traces and fail nothing; trace headers are never read back as an event's headers."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from datetime import datetime

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from cassandra.cluster import Session
from kjournal.client import Client
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.spans import conventions as sem
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action
from kjournal_dev.traces.waterfall import Span
from kjournal_dev.traces.waterfall import read_spans
from opentelemetry import context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan
from opentelemetry.trace import SpanContext
from opentelemetry.trace import TraceFlags

from tests.integration.services.support import RunningService
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import caught_up
from tests.integration.spark.support import wait_until
from tests.integration.tracing.conftest import CollectedSpans

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(900)]

SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5
MALFORMED = "00-not-a-trace-context-at-all-01"


@contextmanager
def caller_span() -> Iterator[SpanContext]:
    """A span of the test's own (its context current), as a caller's service would have."""
    own = SpanContext(
        secrets.randbits(128) | 1, secrets.randbits(64) | 1, False, TraceFlags(TraceFlags.SAMPLED)
    )
    token = context.attach(trace.set_span_in_context(NonRecordingSpan(own)))
    try:
        yield own
    finally:
        context.detach(token)


def _hex(value: int, digits: int) -> str:
    return f"{value:0{digits}x}"


def _one(spans: list[Span], **match: object) -> Span:
    found = [s for s in spans if all(getattr(s, k) == v for k, v in match.items())]
    assert len(found) == 1, (match, [(s.service, s.name, s.trace_id) for s in spans])
    return found[0]


def _children(spans: list[Span], parent: Span) -> list[Span]:
    return [s for s in spans if s.trace_id == parent.trace_id and s.parent_id == parent.span_id]


def _wait_replicated(
    replicator: ReplicatorProcess, kafka: str, session: Session, keyspace: str, topic: str
) -> None:
    wait_until(caught_up(kafka, session, keyspace, topic), 300, "replication", replicator)


def test_one_append_traced_from_the_client_through_kafka_and_spark_to_a_read(
    writer: RunningService,
    reader: RunningService,
    replicator: ReplicatorProcess,
    topics: tuple[str, str],
    kafka_bootstrap: str,
    session: Session,
    traced_keyspace: str,
    collected: CollectedSpans,
) -> None:
    topic = topics[0]
    key = Key(topic, "traced-order-1")
    events = [Event(SeqNr(n), payload=JsonPayload({"n": n})) for n in (1, 2, 3)]
    with Client(writer.url, reader.url) as client:
        with caller_span() as appending:
            appended = client.append(key, events)
        _wait_replicated(replicator, kafka_bootstrap, session, traced_keyspace, topic)
        with caller_span() as reading:
            read = list(client.read(key))
    assert [record.seq_nr for record in read] == [1, 2, 3]

    append_trace = _hex(appending.trace_id, 32)
    # The writer continued the client's trace: its server span's parent is the caller's span.
    spans = collected.wait_for(
        "replicator slice span linked to the append, and the reader's span of its outcome",
        lambda found: (
            any(s.service == "kjournal-replicator" and s.links for s in found)
            and any(
                s.service == "kjournal-reader" and s.name == sem.SPAN_APPEND_OUTCOME for s in found
            )
        ),
        mentioning=append_trace,
    )
    server = _one(spans, trace_id=append_trace, kind=SERVER, service="kjournal-writer")
    assert server.parent_id == _hex(appending.span_id, 16)
    assert server.name == "POST /v1/journals/{topic}/{id}/events"
    assert server.attributes["http.response.status_code"] == 201
    # The writer asked the reader for the append's outcome (with the questions of the moment, in
    # one request); the reader's span for this question sits in the append's trace, under the
    # writer's.
    outcome = _one(
        spans, trace_id=append_trace, service="kjournal-reader", name=sem.SPAN_APPEND_OUTCOME
    )
    assert outcome.parent_id == server.span_id
    # The produce span, under it, says where the record went.
    produce = _one(_children(spans, server), kind=PRODUCER)
    assert produce.name == f"send {topic}"
    assert produce.attributes["messaging.system"] == "kafka"
    assert produce.attributes["messaging.destination.name"] == topic
    assert produce.attributes["messaging.kafka.message.key"] == key.id
    assert produce.attributes["messaging.destination.partition.id"] == str(
        appended.partition_offset.partition
    )
    assert produce.attributes["messaging.kafka.offset"] == appended.partition_offset.offset

    # The replicator's slice span, in its own trace, links to that produce span.
    slice_span = _one(spans, kind=CONSUMER, service="kjournal-replicator")
    assert (append_trace, produce.span_id) in slice_span.links
    link = slice_span.links.index((append_trace, produce.span_id))
    assert (
        slice_span.link_attributes[link]["messaging.kafka.offset"]
        == appended.partition_offset.offset
    )
    assert slice_span.trace_id != append_trace
    assert slice_span.name == f"process {topic}"
    assert slice_span.attributes["messaging.destination.partition.id"] == str(
        appended.partition_offset.partition
    )
    assert slice_span.attributes["messaging.batch.message_count"] >= 1

    # Its parent is the driver's micro-batch span (another process: context passed with the
    # task), and the Cassandra writes are its children.
    batch_trace = collected.wait_for(
        "the micro-batch span and the slice's Cassandra spans",
        lambda found: (
            any(s.name == "micro-batch" for s in found)
            and any(s.parent_id == slice_span.span_id for s in found)
        ),
        mentioning=slice_span.trace_id,
    )
    micro_batch = _one(batch_trace, span_id=slice_span.parent_id)
    assert micro_batch.name == "micro-batch"
    assert micro_batch.service == "kjournal-replicator"
    assert micro_batch.instance != slice_span.instance  # the driver, not the worker
    writes = _children(batch_trace, slice_span)
    assert writes
    assert all(s.kind == CLIENT for s in writes)
    assert all(s.attributes["db.system.name"] == "cassandra" for s in writes)
    assert {s.name for s in writes} >= {"BATCH journal", "SELECT metajournal"}
    assert {"UPDATE pointer2", "INSERT pointer2"} & {s.name for s in writes}

    # The read: the reader's server span with its phases and the Cassandra page.
    read_trace = _hex(reading.trace_id, 32)
    read_spans = collected.wait_for(
        "the read's spans",
        lambda found: any(s.service == "kjournal-reader" and s.kind == SERVER for s in found),
        mentioning=read_trace,
    )
    get = _one(read_spans, trace_id=read_trace, kind=SERVER)
    assert get.parent_id == _hex(reading.span_id, 16)
    assert get.name == "GET /v1/journals/{topic}/{id}/events"
    assert get.attributes["kjournal.events"] == 3
    assert get.attributes["http.response.body.size"] > 0
    # The reader's fold knows the journal (it asked the appends' outcomes): the read takes the
    # partition's end; its events come from Cassandra's rows (the head's metadata read once for
    # them) or from the fold's memory while it still holds them (pointer2, read every half
    # second, trims it). A page read from Cassandra is a CLIENT span of the read's trace.
    phases = {s.name: s for s in _children(read_spans, get)}
    assert "end offset" in phases
    for rows in (s for s in read_spans if s.name == "SELECT journal"):
        assert rows.trace_id == read_trace
        assert rows.kind == CLIENT
        assert rows.attributes["db.response.returned_rows"] == 3
        assert rows.attributes["db.namespace"] == traced_keyspace
        assert "?" in rows.attributes["db.query.text"]


def test_a_malformed_traceparent_in_a_request_starts_a_new_trace(
    writer: RunningService,
    reader: RunningService,
    topics: tuple[str, str],
    collected: CollectedSpans,
) -> None:
    topic = topics[1]
    path = f"/v1/journals/{topic}/malformed-http/events"
    body = {"events": [{"seqNr": 1, "payload": {"n": 1}}]}
    appended = httpx.post(writer.url + path, json=body, headers={"traceparent": MALFORMED})
    assert appended.status_code == 201, appended.text
    read = httpx.get(reader.url + path, headers={"traceparent": MALFORMED})
    assert read.status_code == 200, read.text
    assert len(read.text.splitlines()) == 1

    for service, method in (("kjournal-writer", "POST"), ("kjournal-reader", "GET")):

        def served(spans: list[Span], service: str = service, method: str = method) -> list[Span]:
            return [
                s
                for s in spans
                if s.service == service
                and s.kind == SERVER
                and s.attributes.get("url.path") == path
                and s.attributes.get("http.request.method") == method
            ]

        spans = collected.wait_for(
            f"the {service} span of the request", lambda found: bool(served(found)), path
        )
        (span,) = served(spans)
        assert span.parent_id == ""  # a new trace: the malformed context was ignored
        assert len(span.trace_id) == 32
        assert int(span.trace_id, 16) != 0


def test_a_callers_decision_not_to_sample_is_kept(
    writer: RunningService,
    reader: RunningService,
    topics: tuple[str, str],
    collected: CollectedSpans,
) -> None:
    """A request whose `traceparent` says not sampled makes no span in the writer or the reader
    (the services sample every new trace here); the one sent after it, sampled, does. Each
    service exports its spans in the order they end, so once the second request's spans are
    in, the first's would be."""
    topic = topics[1]
    unsampled, sampled = secrets.token_hex(16), secrets.token_hex(16)
    for trace_id, flags in ((unsampled, "00"), (sampled, "01")):
        path = f"/v1/journals/{topic}/decided-{trace_id}/events"
        headers = {"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-{flags}"}
        body = {"events": [{"seqNr": 1, "payload": {"n": 1}}]}
        appended = httpx.post(writer.url + path, json=body, headers=headers)
        assert appended.status_code == 201, appended.text
        read = httpx.get(reader.url + path, headers=headers)
        assert read.status_code == 200, read.text

    def both_served(spans: list[Span]) -> bool:
        return {s.service for s in spans if s.trace_id == sampled and s.kind == SERVER} == {
            "kjournal-writer",
            "kjournal-reader",
        }

    spans = collected.wait_for("the sampled requests' spans", both_served, mentioning=sampled)
    assert any(s.kind == PRODUCER for s in spans if s.trace_id == sampled)
    exported = read_spans(collected.spans_dir, mentioning=unsampled)
    assert [(s.service, s.name) for s in exported if s.trace_id == unsampled] == []


async def _produce_raw(
    bootstrap: str, topic: str, id: str, headers: dict[str, str]
) -> tuple[int, int]:
    """An append as another producer would write it: the user headers given, raw."""
    events = Events((Event(SeqNr(1), payload=JsonPayload({"raw": True})),))
    record = encode_action(append_action(Key(topic, id), datetime.now(UTC), events))
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        sent = await producer.send_and_wait(
            topic,
            key=record.key,
            value=record.value,
            headers=[*record.headers, *((k, v.encode()) for k, v in headers.items())],
            timestamp_ms=record.timestamp_ms,
        )
    finally:
        await producer.stop()
    return int(sent.partition), int(sent.offset)


def test_a_malformed_traceparent_in_a_record_is_replicated_without_a_link(
    replicator: ReplicatorProcess,
    reader: RunningService,
    topics: tuple[str, str],
    kafka_bootstrap: str,
    session: Session,
    traced_keyspace: str,
    collected: CollectedSpans,
) -> None:
    topic = topics[0]
    partition, offset = asyncio.run(
        _produce_raw(kafka_bootstrap, topic, "malformed-record", {"traceparent": MALFORMED})
    )
    _wait_replicated(replicator, kafka_bootstrap, session, traced_keyspace, topic)
    assert replicator.alive()
    read = httpx.get(f"{reader.url}/v1/journals/{topic}/malformed-record/events")
    assert read.status_code == 200
    assert [line for line in read.text.splitlines() if line]  # the event is there

    def applying(spans: list[Span]) -> list[Span]:
        return [
            s
            for s in spans
            if s.kind == CONSUMER
            and s.attributes.get("messaging.destination.partition.id") == str(partition)
            and s.attributes.get("kjournal.offset.first", -1)
            <= offset
            <= s.attributes.get("kjournal.offset.last", -1)
        ]

    spans = collected.wait_for(
        "the slice span that applied the record",
        lambda found: bool(applying(found)),
        mentioning=f"process {topic}",
    )
    applied = applying(spans)
    assert applied
    assert all(not s.error for s in applied)
    for span in applied:  # the record's header made no link (links name their record's offset)
        linked = [attributes.get("messaging.kafka.offset") for attributes in span.link_attributes]
        assert offset not in linked


def _headers_read(reader: RunningService, topic: str, id: str) -> list[dict[str, str]]:
    read = httpx.get(f"{reader.url}/v1/journals/{topic}/{id}/events")
    assert read.status_code == 200, read.text
    lines = [json.loads(line) for line in read.text.splitlines() if line]
    assert lines
    return [line.get("headers", {}) for line in lines]


def test_trace_headers_are_never_read_back_as_event_headers(
    writer: RunningService,
    reader: RunningService,
    replicator: ReplicatorProcess,
    topics: tuple[str, str],
    kafka_bootstrap: str,
    session: Session,
    traced_keyspace: str,
) -> None:
    replicated, tail_only = topics
    foreign = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    foreign["tracestate"] = "vendor=x"
    foreign["team"] = "payments"
    for topic in (replicated, tail_only):
        # Written by our writer (tracing on: its record carries trace headers) ...
        ours = httpx.post(
            f"{writer.url}/v1/journals/{topic}/ours/events",
            json={"events": [{"seqNr": 1, "payload": 1}], "headers": {"team": "payments"}},
        )
        assert ours.status_code == 201, ours.text
        # ... and by another producer whose instrumentation put trace headers in.
        asyncio.run(_produce_raw(kafka_bootstrap, topic, "theirs", foreign))
    # From the Kafka tail (never replicated), and from Cassandra once replicated.
    _wait_replicated(replicator, kafka_bootstrap, session, traced_keyspace, replicated)
    for topic in (tail_only, replicated):
        for id in ("ours", "theirs"):
            for headers in _headers_read(reader, topic, id):
                assert headers == {"team": "payments"}, (topic, id, headers)


@pytest.mark.parametrize("name", ["traceparent", "tracestate"])
def test_a_user_header_named_like_a_trace_header_is_refused(
    writer: RunningService, reader: RunningService, topics: tuple[str, str], name: str
) -> None:
    path = f"/v1/journals/{topics[1]}/refused-{name}"
    answer = httpx.post(
        f"{writer.url}{path}/events",
        json={"events": [{"seqNr": 1, "payload": 1}], "headers": {name: "x"}},
    )
    assert answer.status_code == 400
    assert answer.json()["detail"] == f"{name} is reserved and cannot be a user header"
    assert httpx.get(f"{reader.url}{path}/pointer").status_code == 404  # nothing was produced
