"""A journal's life over HTTP: append, read, pointer, status, delete, purge, append again, mark.

No replicator runs: every read is served from the Kafka tail (read-your-writes).
"""

from __future__ import annotations

import base64

import httpx
import pytest
from kjournal.client import Client
from kjournal.errors import UnknownTopic
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload

from tests.integration.services.support import RunningService
from tests.integration.services.support import end_offsets

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


def _events(first: int, count: int) -> list[Event]:
    return [
        Event(SeqNr(n), frozenset({"t"}), JsonPayload({"n": n}))
        for n in range(first, first + count)
    ]


def test_a_journal_from_first_append_to_purge_and_again(client: Client, topic: str):
    key = Key(topic, "order/1 ü")  # needs percent-encoding: '/', a space, non-ASCII

    assert client.pointer(key) is None
    assert client.status(key) is None

    first = client.append(key, _events(1, 3))
    assert (first.range.from_, first.range.to) == (1, 3)
    # Read-your-writes with no replicator at all: Kafka's head answers.
    assert [r.seq_nr for r in client.read(key)] == [1, 2, 3]

    metadata = RecordMetadata(
        HeaderMetadata({"who": "test"}), PayloadMetadata(ExpireAfter.of(7, "days"))
    )
    mixed = [
        Event(SeqNr(4), payload=TextPayload("four")),
        Event(SeqNr(5), payload=BinaryPayload(b"\x00\x01\xff")),
        Event(SeqNr(6)),
    ]
    second = client.append(key, mixed, metadata, {"source": "it"})
    assert second.partition_offset.partition == first.partition_offset.partition
    assert second.partition_offset.offset > first.partition_offset.offset

    records = list(client.read(key))
    assert [r.seq_nr for r in records] == [1, 2, 3, 4, 5, 6]
    assert records[0].event.payload == JsonPayload({"n": 1})
    assert records[0].event.tags == frozenset({"t"})
    assert records[3].event.payload == TextPayload("four")
    assert records[4].event.payload == BinaryPayload(b"\x00\x01\xff")
    assert records[5].event.payload is None
    assert records[4].metadata.header.data == {"who": "test"}
    assert records[4].metadata.payload.expire_after == ExpireAfter.of(7, "days")
    assert records[4].headers == {"source": "it"}
    assert records[4].timestamp == second.timestamp

    assert [r.seq_nr for r in client.read(key, from_=2, to=5, limit=2)] == [2, 3]
    assert client.pointer(key) == 6
    status = client.status(key)
    assert status is not None
    assert (status.seq_nr, status.delete_to, status.pointer2) == (6, None, None)
    assert status.unreplicated_actions == 2
    assert status.partition == first.partition_offset.partition

    client.delete(key, 4)
    assert [r.seq_nr for r in client.read(key)] == [5, 6]
    status = client.status(key)
    assert status is not None
    assert status.delete_to == 4

    client.purge(key)
    assert client.pointer(key) is None
    assert list(client.read(key)) == []

    client.append(key, _events(1, 2))
    assert [r.seq_nr for r in client.read(key)] == [1, 2]

    mark = client.mark(key)
    named = client.mark(key, "barrier-1")
    assert named.id == "barrier-1"
    assert mark.id != named.id
    assert named.partition_offset.offset > mark.partition_offset.offset
    assert [r.seq_nr for r in client.read(key)] == [1, 2]  # marks change nothing


def test_http_shapes(writer: RunningService, reader: RunningService, topic: str):
    events_url = f"/v1/journals/{topic}/a%2Fb/events"
    body = {
        "events": [
            {"seqNr": 1, "payload": {"x": 1}, "tags": ["b", "a"]},
            {"seqNr": 2, "payloadType": "binary", "payload": base64.b64encode(b"hi").decode()},
        ],
        "expireAfter": "1 day",
        "metadata": {"header": {"h": 1}, "payload": {"p": 2}},
        "headers": {"k": "v"},
    }
    with httpx.Client(base_url=writer.url, timeout=30) as http:
        created = http.post(events_url, json=body)
        assert created.status_code == 201, created.text
        answer = created.json()
        assert answer.keys() == {
            "partition",
            "offset",
            "from",
            "to",
            "timestamp",
            "replay",
            "seqNr",
        }
        assert (answer["from"], answer["to"], answer["replay"], answer["seqNr"]) == (1, 2, False, 2)
        assert created.headers["etag"] == '"2"'
        again = http.post(events_url, json=body)  # the same append again: a replay
        assert again.status_code == 200, again.text
        assert again.json() == {**answer, "replay": True}

        assert http.delete(events_url, params={"to": 1}).status_code == 202
        marked = http.post(f"/v1/journals/{topic}/a%2Fb/marks", json={"id": "m"})
        assert marked.status_code == 201
        assert marked.json()["id"] == "m"

    with httpx.Client(base_url=reader.url, timeout=30) as http:
        response = http.get(events_url)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"
        lines = response.text.splitlines()
        assert len(lines) == 1  # seqNr 1 is deleted
        assert '"seqNr":2' in lines[0]
        assert '"payload":"aGk="' in lines[0]
        assert http.get(f"/v1/journals/{topic}/a%2Fb/pointer").json() == {"seqNr": 2}
        status = http.get(f"/v1/journals/{topic}/a%2Fb").json()
        assert status["deleteTo"] == 1
        # append, its replay (a record the rule drops), delete, mark
        assert (status["unreplicatedActions"], status["unreplicatedDuplicates"]) == (4, 1)

        replication = http.get(f"/v1/topics/{topic}/replication").json()
        assert [p["partition"] for p in replication["partitions"]] == [0, 1, 2, 3]
        assert replication["lag"] == 4  # pointer2 is null
        assert http.get(f"/v1/topics/{topic}/journals").text == ""  # nothing replicated

        for path in ("/openapi.json", "/healthz", "/readyz", "/metrics"):
            assert http.get(path).status_code == 200, path
        assert "kjournal_http_requests_total" in http.get("/metrics").text


def test_each_journal_reads_only_its_own_events(client: Client, topic: str):
    keys = [Key(topic, f"journal-{n}") for n in range(6)]  # more ids than partitions
    for round_ in range(3):
        for n, key in enumerate(keys):
            client.append(key, [Event(SeqNr(round_ + 1), payload=JsonPayload({"k": n}))])
    for n, key in enumerate(keys):
        records = list(client.read(key))
        assert [r.seq_nr for r in records] == [1, 2, 3]
        assert [r.event.payload for r in records] == [JsonPayload({"k": n})] * 3


def test_unknown_topic_is_an_error_everywhere(client: Client, kafka_bootstrap: str):
    key = Key("journal_no_such_topic_here", "a")
    with pytest.raises(UnknownTopic):
        client.append(key, _events(1, 1))
    with pytest.raises(UnknownTopic):
        client.pointer(key)
    with pytest.raises(UnknownTopic):
        list(client.read(key))
    with pytest.raises(UnknownTopic):
        client.replication(key.topic)
    assert end_offsets(kafka_bootstrap, key.topic) == {}
