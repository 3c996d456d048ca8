"""The topic feed (`GET /v1/topics/{topic}/events`) over the real writer, reader, Kafka and
Cassandra: partition order, filters, resuming after every line (inside multi-event appends too),
deletes and purges in place, dropped appends never delivered, agreement with journal reads with
part of the topic replicated, 410 past retention, 400 for bad cursors."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import RecordsToDelete
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.api import quote_segment
from kjournal.client import Client
from kjournal.feed import Cursor
from kjournal.metrics.catalogue import FOLD_LISTINGS
from kjournal.model import Key
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services import concurrency as c
from tests.integration.services.support import RunningService
from tests.integration.services.support import produce_events
from tests.integration.services.support import topic_counters

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(300)]

Line = dict[str, Any]


def _feed_url(reader: RunningService, topic: str) -> str:
    return f"{reader.url}/v1/topics/{quote_segment(topic)}/events"


def feed(http: httpx.Client, reader: RunningService, topic: str, **params: Any) -> list[Line]:
    response = http.get(_feed_url(reader, topic), params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines() if line]
    assert all("problem" not in line for line in lines), lines
    assert lines[-1]["type"] == "end"
    return lines


def project(lines: list[Line], id_: str) -> list[tuple[int, Any]]:
    """A projection of journal `id_` from the feed: events, then deletes and purges applied."""
    events: dict[int, Any] = {}
    for line in lines:
        if line.get("id") != id_:
            continue
        if line["type"] == "event":
            events[line["seqNr"]] = line["payload"]
        elif line["type"] == "delete":
            events = {n: p for n, p in events.items() if n > line["to"]}
        elif line["type"] == "purge":
            events = {}
    return sorted(events.items())


def body(first: int, last: int, mark: str, tags: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [
        {"seqNr": n, "payload": {"n": n, "mark": mark}, "tags": list(tags)}
        for n in range(first, last + 1)
    ]


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=60) as client:
        yield client


JOURNALS = [f"order-{n}" for n in range(6)]


def _history(
    http: httpx.Client,
    client: Client,
    writer: RunningService,
    topic: str,
    replication: c.Replication,
) -> None:
    """Appends of 1 to 3 events to six journals, with a conflict, a resend, a stale condition,
    a delete, a purge and a re-creation; replicated into Cassandra half way."""
    w = writer.url
    for id_ in JOURNALS:
        assert c.append(http, w, topic, id_, body(1, 3, "a", ("blue",))).status == 201
    for id_ in JOURNALS[:3]:
        assert c.append(http, w, topic, id_, body(4, 4, "b", ("red",)), 3).status == 201
    replication.run(topic)
    # dropped: a conflict, a stale condition; a resend is answered as a replay
    assert c.append(http, w, topic, JOURNALS[0], body(4, 5, "dropped")).status == 409
    assert c.append(http, w, topic, JOURNALS[1], body(4, 4, "dropped"), 3).status == 412
    assert c.append(http, w, topic, JOURNALS[2], body(4, 4, "b", ("red",)), 3).status == 200
    assert c.append(http, w, topic, JOURNALS[2], body(5, 6, "c")).status == 201
    client.delete(Key(topic, JOURNALS[3]), 2)
    client.purge(Key(topic, JOURNALS[4]))
    assert c.append(http, w, topic, JOURNALS[4], body(1, 2, "again")).status == 201
    assert c.append(http, w, topic, "other-1", body(1, 2, "other", ("green",))).status == 201


@pytest.fixture
def written(
    http: httpx.Client,
    client: Client,
    writer: RunningService,
    topic: str,
    platform: Endpoints,
    services_keyspace: str,
) -> str:
    """The topic with `_history` written to it."""
    with c.replication(platform, services_keyspace) as replication:
        _history(http, client, writer, topic, replication)
    return topic


def test_the_feed_agrees_with_journal_reads_and_resumes_after_every_line(
    http: httpx.Client, reader: RunningService, written: str
) -> None:
    topic = written
    lines = feed(http, reader, topic)
    entries = lines[:-1]

    # every journal read agrees with its projection from the feed; nothing dropped is delivered
    for id_ in [*JOURNALS, "other-1"]:
        assert project(lines, id_) == c.events(http, reader.url, topic, id_), id_
    assert not [e for e in entries if e["type"] == "event" and e["payload"]["mark"] == "dropped"]
    # each partition in offset order, events of one append in order
    by_partition: dict[int, list[tuple[int, int]]] = {}
    for entry in entries:
        by_partition.setdefault(entry["partition"], []).append(
            (entry["offset"], entry.get("index", 0))
        )
    for positions in by_partition.values():
        assert positions == sorted(positions)
        assert len(set(positions)) == len(positions)
    # the delete and the purge in place, with what they do
    controls = [(e["type"], e["id"], e.get("to")) for e in entries if e["type"] != "event"]
    assert sorted(controls, key=str) == [("delete", JOURNALS[3], 2), ("purge", JOURNALS[4], None)]
    purge = next(e for e in entries if e["type"] == "purge")
    again = [e for e in entries if e["type"] == "event" and e["payload"]["mark"] == "again"]
    assert again
    assert all(e["offset"] > purge["offset"] for e in again)

    # resuming after any line delivers exactly the lines after it
    for index, line in enumerate(entries):
        assert feed(http, reader, topic, after=line["cursor"]) == lines[index + 1 :], index
    # the end cursor resumes with nothing but the end
    assert feed(http, reader, topic, after=lines[-1]["cursor"]) == [lines[-1]]


def test_filters_by_tag_prefix_and_partition(
    http: httpx.Client, reader: RunningService, written: str
) -> None:
    topic = written
    everything = feed(http, reader, topic)[:-1]

    tagged = feed(http, reader, topic, tag=["red", "green"])[:-1]
    events = [e for e in tagged if e["type"] == "event"]
    assert events == [
        e for e in everything if e["type"] == "event" and {"red", "green"} & set(e["tags"])
    ]
    assert {e["mark"] for e in (e["payload"] for e in events)} == {"b", "other"}
    assert [e for e in tagged if e["type"] != "event"] == [
        e for e in everything if e["type"] != "event"
    ]

    prefixed = feed(http, reader, topic, idPrefix="other-")[:-1]
    assert prefixed
    assert {e["id"] for e in prefixed} == {"other-1"}

    some = feed(http, reader, topic, partitions="0,2")

    def without_cursor(lines: list[Line]) -> list[Line]:
        return [{k: v for k, v in line.items() if k != "cursor"} for line in lines]

    assert without_cursor(some[:-1]) == without_cursor(
        [e for e in everything if e["partition"] in (0, 2)]
    )
    assert set(Cursor.decode(some[-1]["cursor"]).positions) == {0, 2}


def _problem(http: httpx.Client, reader: RunningService, topic: str, **params: Any) -> Line:
    response = http.get(_feed_url(reader, topic), params=params)
    assert response.headers["content-type"] == "application/problem+json", response.text
    problem: Line = response.json()
    assert problem["status"] == response.status_code
    return problem


def test_bad_cursors_and_partitions_are_400(
    http: httpx.Client, reader: RunningService, topic: str
) -> None:
    for after in [
        "nope",
        "v1.!!",
        "v1.MDo5OTk",
    ]:  # the last: offset 999 of partition 0, past the end
        problem = _problem(http, reader, topic, after=after)
        assert (problem["status"], problem["type"]) == (400, "urn:kjournal:problem:invalid-cursor")
    problem = _problem(http, reader, topic, partitions="9")
    assert problem["status"] == 400
    problem = _problem(http, reader, topic, partitions="a")
    assert (problem["status"], problem["type"]) == (400, "urn:kjournal:problem:validation-error")
    problem = _problem(http, reader, topic, **{"from": "middle"})
    assert problem["status"] == 400


async def _delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_records({TopicPartition(topic, partition): RecordsToDelete(before)})
    finally:
        await admin.close()


def test_a_cursor_before_the_log_start_is_410_naming_the_earliest_position(
    http: httpx.Client,
    writer: RunningService,
    reader: RunningService,
    topic: str,
    platform: Endpoints,
) -> None:
    for n in range(1, 4):
        assert c.append(http, writer.url, topic, "gone", body(n, n, "g")).status == 201
    lines = feed(http, reader, topic)
    first = lines[0]
    partition = first["partition"]
    asyncio.run(_delete_records(platform.kafka_bootstrap, topic, partition, 2))

    problem = _problem(http, reader, topic, after=first["cursor"])
    assert problem["status"] == 410
    assert problem["type"] == "urn:kjournal:problem:position-gone"
    assert (problem["partition"], problem["offset"], problem["earliest"]) == (partition, 1, 2)
    # from the start, the feed now begins at the earliest offset Kafka holds
    rest = feed(http, reader, topic)
    assert [e["offset"] for e in rest[:-1]] == [2]


class _Frames:
    """Server-sent events of an open response, one (event, id, data) at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.iter_lines()

    def next(self) -> tuple[str, str | None, Line]:
        fields: dict[str, str] = {}
        for line in self._lines:
            if not line:
                if fields:
                    return fields["event"], fields.get("id"), json.loads(fields["data"])
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        raise AssertionError("the stream ended")

    def until_events(self, count: int) -> list[tuple[str, str | None, Line]]:
        frames: list[tuple[str, str | None, Line]] = []
        while sum(1 for f in frames if f[0] == "event") < count:
            frames.append(self.next())
            assert frames[-1][0] != "problem", frames[-1]
        return frames


def _follow(
    http: httpx.Client, reader: RunningService, topic: str, last_event_id: str | None = None
) -> Any:
    headers = {"accept": "text/event-stream"}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    return http.stream("GET", _feed_url(reader, topic), params={"heartbeat": 0.5}, headers=headers)


def test_a_live_tail_delivers_new_appends_beats_and_resumes_from_last_event_id(
    http: httpx.Client, writer: RunningService, reader: RunningService, topic: str
) -> None:
    w = writer.url
    assert c.append(http, w, topic, "live", body(1, 3, "before")).status == 201
    with _follow(http, reader, topic) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        frames = _Frames(response)
        event, id_, data = frames.next()
        assert (event, data["type"], id_) == ("heartbeat", "heartbeat", data["cursor"])
        seen = frames.until_events(3)
        assert [d["seqNr"] for e, _, d in seen if e == "event"] == [1, 2, 3]
        assert all(i == d["cursor"] for _, i, d in seen)
        beat = frames.next()  # nothing new: a heartbeat at the position after seqNr 3
        assert beat[0] == "heartbeat"
        assert beat[1] == [d for e, _, d in seen if e == "event"][-1]["cursor"]

        assert c.append(http, w, topic, "live", body(4, 5, "live")).status == 201
        live = [d for e, _, d in frames.until_events(2) if e == "event"]
        assert [(d["seqNr"], d["index"]) for d in live] == [(4, 0), (5, 1)]
    # disconnected after seqNr 4 was processed (inside its append); seqNr 6 comes meanwhile
    assert c.append(http, w, topic, "live", body(6, 6, "while away")).status == 201
    with _follow(http, reader, topic, last_event_id=live[0]["cursor"]) as response:
        frames = _Frames(response)
        resumed = [d for e, _, d in frames.until_events(2) if e == "event"]
        assert [d["seqNr"] for d in resumed] == [5, 6]
        assert resumed[0] == live[1]


def test_a_bad_last_event_id_is_400(http: httpx.Client, reader: RunningService, topic: str) -> None:
    with _follow(http, reader, topic, last_event_id="not a cursor") as response:
        response.read()
        assert response.status_code == 400
        assert response.json()["type"] == "urn:kjournal:problem:invalid-cursor"


async def _produce_poison(bootstrap: str, topic: str, id_: str) -> None:
    """A record of journal `id_` whose `journal.action` header is not JSON."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(
            topic, key=id_.encode(), value=None, headers=[("journal.action", b"{not json")]
        )
    finally:
        await producer.stop()


def test_an_undecodable_record_is_a_quarantined_entry_and_the_feed_goes_on(
    http: httpx.Client,
    writer: RunningService,
    reader: RunningService,
    topic: str,
    platform: Endpoints,
) -> None:
    assert c.append(http, writer.url, topic, "poisoned", body(1, 2, "before")).status == 201
    asyncio.run(_produce_poison(platform.kafka_bootstrap, topic, "poisoned"))
    assert c.append(http, writer.url, topic, "healthy", body(1, 1, "after")).status == 201

    entries = feed(http, reader, topic)[:-1]
    poisoned = [e for e in entries if e["id"] == "poisoned"]
    assert [(e["type"], e.get("seqNr")) for e in poisoned] == [
        ("event", 1),
        ("event", 2),
        ("quarantined", None),
    ]
    assert "journal.action" in poisoned[-1]["reason"]
    assert poisoned[-1]["offset"] == poisoned[0]["offset"] + 1
    assert ("healthy", 1) in [(e["id"], e.get("seqNr")) for e in entries]


def test_a_catch_up_has_the_reader_follow_its_topic(
    http: httpx.Client, reader: RunningService, topic: str, platform: Endpoints
) -> None:
    """A catch-up reads what the reader's fold decides, as journal reads do: a topic no one asked
    the reader about is followed from its first catch-up on (its journals listed once)."""
    produce_events(platform.kafka_bootstrap, Key(topic, "unasked"), 3)

    lines = feed(http, reader, topic)
    assert [(e["id"], e["seqNr"]) for e in lines[:-1]] == [("unasked", n) for n in (1, 2, 3)]
    deadline = time.monotonic() + 120
    while topic_counters(http, reader.url, topic, FOLD_LISTINGS.name)[FOLD_LISTINGS.name] < 1:
        assert time.monotonic() < deadline, f"the reader does not follow {topic}"
        time.sleep(0.05)


RANDOM_JOURNALS = ("r0", "r1", "r2")
OPS = ("next", "next", "overlap", "resend", "stale", "delete", "purge", "replicate")


@settings(
    max_examples=6,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(RANDOM_JOURNALS), st.sampled_from(OPS), st.integers(1, 3)),
        min_size=4,
        max_size=14,
    ),
    cut=st.floats(0, 1),
)
def test_for_random_histories_the_feed_agrees_with_journal_reads(
    http: httpx.Client,
    client: Client,
    writer: RunningService,
    reader: RunningService,
    topic: str,
    platform: Endpoints,
    services_keyspace: str,
    ops: list[tuple[str, str, int]],
    cut: float,
) -> None:
    """Appends (next, overlapping with other content, resent, with a stale condition), deletes,
    purges and replication at random points, on journals of their own (an id prefix per
    example): each journal's projection from the feed is its read, and the feed resumed after a
    random line is the rest of it."""
    prefix = f"{uuid.uuid4().hex[:8]}-"
    last_sent: dict[str, list[dict[str, Any]]] = {}
    with c.replication(platform, services_keyspace) as replication:
        for name, op, n in ops:
            id_ = prefix + name
            seq_nr = c.pointer(http, reader.url, topic, id_)
            if op == "next":
                sent = body(seq_nr + 1, seq_nr + n, op)
                c.append(http, writer.url, topic, id_, sent)
                last_sent[id_] = sent
            elif op == "overlap":
                c.append(http, writer.url, topic, id_, body(max(1, seq_nr - 1), seq_nr + n, op))
            elif op == "resend" and id_ in last_sent:
                c.append(http, writer.url, topic, id_, last_sent[id_])
            elif op == "stale" and seq_nr > 1:
                c.append(http, writer.url, topic, id_, body(seq_nr, seq_nr, op), seq_nr - 1)
            elif op == "delete" and seq_nr:
                client.delete(Key(topic, id_), max(1, seq_nr - n + 1))
            elif op == "purge" and seq_nr:
                client.purge(Key(topic, id_))
            elif op == "replicate":
                replication.run(topic)
    lines = feed(http, reader, topic, idPrefix=prefix)
    for name in RANDOM_JOURNALS:
        id_ = prefix + name
        assert project(lines, id_) == c.events(http, reader.url, topic, id_), id_
    if len(lines) > 1:
        index = int(cut * (len(lines) - 2))  # any line but the end
        resumed = feed(http, reader, topic, idPrefix=prefix, after=lines[index]["cursor"])
        assert resumed == lines[index + 1 :]
