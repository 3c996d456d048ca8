"""Bad requests: each gets its own 4xx problem (RFC 9457), and nothing reaches Kafka.

The session writer accepts bodies up to 1 MiB and records up to 100 000 bytes (see conftest).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import httpx
import pytest

from tests.integration.services.support import RunningService
from tests.integration.services.support import end_offsets

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

TOPIC = "{topic}"  # replaced by the test's fresh topic


@dataclass(frozen=True)
class Bad:
    name: str
    method: str
    path: str
    status: int
    type: str  # the problem type's slug
    detail: str = ""  # a fragment of the problem's detail
    json: Any = None
    content: bytes | None = None
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    reader: bool = False
    field: str | None = None  # for validation errors: the first field named

    def __str__(self) -> str:
        return self.name


def one(seq_nr: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"events": [{"seqNr": seq_nr, **extra}]}


EVENTS = f"/v1/journals/{TOPIC}/a/events"


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


WRITER_CASES = [
    Bad(
        "empty batch", "POST", EVENTS, 400, "empty-batch", "at least one event", json={"events": []}
    ),
    Bad(
        "decreasing seqNrs",
        "POST",
        EVENTS,
        400,
        "seq-nr-order",
        "events[1].seqNr is 1 after 2",
        json={"events": [{"seqNr": 2}, {"seqNr": 1}]},
    ),
    Bad(
        "repeated seqNr",
        "POST",
        EVENTS,
        400,
        "seq-nr-order",
        "events[2].seqNr is 5 after 5",
        json={"events": [{"seqNr": 4}, {"seqNr": 5}, {"seqNr": 5}]},
    ),
    Bad(
        "seqNr 0",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "greater than or equal to 1",
        json=one(0),
        field="events[0].seqNr",
    ),
    Bad(
        "seqNr beyond int64",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "",
        json=one(2**63),
        field="events[0].seqNr",
    ),
    Bad(
        "seqNr not a number",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "integer",
        json=one("x"),
        field="events[0].seqNr",
    ),
    Bad(
        "unknown payload type",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "'json', 'text' or 'binary'",
        json=one(payloadType="xml", payload="<a/>"),
        field="events[0].payloadType",
    ),
    Bad(
        "bad base64",
        "POST",
        EVENTS,
        400,
        "invalid-payload",
        "events[0].payload is not valid base64",
        json=one(payloadType="binary", payload="not base64!"),
    ),
    Bad(
        "text payload that is not text",
        "POST",
        EVENTS,
        400,
        "invalid-payload",
        "must be a string",
        json=one(payloadType="text", payload={"a": 1}),
    ),
    Bad(
        "payload type without a payload",
        "POST",
        EVENTS,
        400,
        "invalid-payload",
        "no payload",
        json=one(payloadType="binary"),
    ),
    Bad(
        "unparsable expireAfter",
        "POST",
        EVENTS,
        400,
        "invalid-duration",
        "expireAfter",
        json={**one(), "expireAfter": "soon"},
    ),
    Bad(
        "negative expireAfter",
        "POST",
        EVENTS,
        400,
        "invalid-duration",
        "expireAfter",
        json={**one(), "expireAfter": "-1 day"},
    ),
    Bad(
        "reserved header",
        "POST",
        EVENTS,
        400,
        "invalid-input",
        "journal.action is reserved",
        json={**one(), "headers": {"journal.action": "x"}},
    ),
    Bad(
        "unknown member",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "",
        json={**one(), "evnts": []},
        field="evnts",
    ),
    Bad(
        "body is not JSON",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "body: Invalid JSON",
        content=b"{events:",
        headers={"content-type": "application/json"},
    ),
    Bad(
        "seqNr as a string",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "integer",
        json=one("1"),
        field="events[0].seqNr",
    ),
    Bad(
        "a key twice in one object",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "appears twice",
        content=b'{"events": [{"seqNr": 1, "seqNr": 2}]}',
        headers={"content-type": "application/json"},
    ),
    Bad(
        "NaN in the body",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "NaN is not JSON",
        content=b'{"events": [{"seqNr": 1, "payload": NaN}]}',
        headers={"content-type": "application/json"},
    ),
    Bad(
        "empty header name",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "",
        json={**one(), "headers": {"": "x"}},
        field='headers[""]',
    ),
    Bad(
        "more events than one append may carry",
        "POST",
        EVENTS,
        400,
        "too-many-events",
        "10001 events",
        json={"events": [{"seqNr": n} for n in range(1, 10_002)]},
    ),
    Bad(
        "a query parameter the route does not take",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "not a parameter of this route",
        json=one(),
        params={"sync": "true"},
        field="sync",
    ),
    Bad(
        "delete with to twice",
        "DELETE",
        EVENTS,
        400,
        "validation-error",
        "",
        params={"to": [1, 2]},
        field="to",
    ),
    Bad(
        "body is not declared JSON",
        "POST",
        EVENTS,
        415,
        "",
        "expected an application/json body",
        content=b'{"events": [{"seqNr": 1}]}',
        headers={"content-type": "text/plain"},
    ),
    Bad("body is a list", "POST", EVENTS, 400, "validation-error", "", json=[1, 2]),
    Bad(
        "oversize body",
        "POST",
        EVENTS,
        413,
        "request-too-large",
        "exceeds the limit of 1048576 bytes",
        content=b'{"events":[{"seqNr":1,"payload":"' + b"x" * (2 * 1024 * 1024) + b'"}]}',
        headers={"content-type": "application/json"},
    ),
    Bad(
        "oversize record",
        "POST",
        EVENTS,
        413,
        "record-too-large",
        "exceeds the limit of 100000 bytes",
        json=one(payloadType="text", payload="y" * 150_000),
    ),
    Bad(
        "binary record too large after decoding",
        "POST",
        EVENTS,
        413,
        "record-too-large",
        "exceeds the limit",
        json=one(payloadType="binary", payload=base64.b64encode(b"z" * 120_000).decode()),
    ),
    Bad(
        "invalid topic",
        "POST",
        "/v1/journals/bad%20topic%21/a/events",
        400,
        "invalid-key",
        "invalid topic",
        json=one(),
    ),
    Bad(
        "topic without the prefix",
        "POST",
        "/v1/journals/orders/a/events",
        400,
        "invalid-key",
        "must start with 'journal'",
        json=one(),
    ),
    Bad(
        "unknown topic",
        "POST",
        "/v1/journals/journal_missing_topic/a/events",
        404,
        "unknown-topic",
        "does not exist",
        json=one(),
    ),
    Bad(
        "id too long",
        "POST",
        f"/v1/journals/{TOPIC}/{'i' * 1025}/events",
        400,
        "invalid-key",
        "exceeds the limit of 1024",
        json=one(),
    ),
    Bad(
        "id not UTF-8",
        "POST",
        f"/v1/journals/{TOPIC}/%FF/events",
        400,
        "invalid-key",
        "not percent-encoded UTF-8",
        json=one(),
    ),
    Bad("delete without to", "DELETE", EVENTS, 400, "validation-error", "", field="to"),
    Bad("delete to 0", "DELETE", EVENTS, 400, "validation-error", "", params={"to": 0}, field="to"),
    Bad(
        "delete to a word",
        "DELETE",
        EVENTS,
        400,
        "validation-error",
        "integer",
        params={"to": "all"},
        field="to",
    ),
    Bad(
        "mark id empty",
        "POST",
        f"/v1/journals/{TOPIC}/a/marks",
        400,
        "validation-error",
        "",
        json={"id": ""},
        field="id",
    ),
    Bad("no such route", "POST", f"/v1/journals/{TOPIC}/a/things", 404, "not-found", ""),
    Bad("wrong method", "PUT", EVENTS, 405, "", "", json=one()),
]

READ = f"/v1/journals/{TOPIC}/a/events"
READER_CASES = [
    Bad(
        "from 0",
        "GET",
        READ,
        400,
        "validation-error",
        "",
        params={"from": 0},
        reader=True,
        field="from",
    ),
    Bad(
        "to a word",
        "GET",
        READ,
        400,
        "validation-error",
        "integer",
        params={"to": "end"},
        reader=True,
        field="to",
    ),
    Bad(
        "limit 0",
        "GET",
        READ,
        400,
        "validation-error",
        "",
        params={"limit": 0},
        reader=True,
        field="limit",
    ),
    Bad(
        "reader: invalid topic",
        "GET",
        "/v1/journals/a..b%2A/a/pointer",
        400,
        "invalid-key",
        "invalid topic",
        reader=True,
    ),
    Bad(
        "reader: unknown topic",
        "GET",
        "/v1/journals/journal_missing_topic/a/events",
        404,
        "unknown-topic",
        "",
        reader=True,
    ),
    Bad(
        "reader: no such journal",
        "GET",
        f"/v1/journals/{TOPIC}/nobody/pointer",
        404,
        "journal-not-found",
        "does not exist",
        reader=True,
    ),
    Bad(
        "reader: status of no journal",
        "GET",
        f"/v1/journals/{TOPIC}/nobody",
        404,
        "journal-not-found",
        "",
        reader=True,
    ),
    Bad(
        "reader: replication of an invalid topic",
        "GET",
        "/v1/topics/x%20y/replication",
        400,
        "invalid-key",
        "",
        reader=True,
    ),
]


def _send(service: RunningService, case: Bad, topic: str) -> httpx.Response:
    path = case.path.replace(TOPIC, topic)
    with httpx.Client(base_url=service.url, timeout=30) as http:
        return http.request(
            case.method,
            path,
            json=case.json,
            content=case.content,
            params=case.params,
            headers=case.headers,
        )


def _check(response: httpx.Response, case: Bad) -> dict[str, Any]:
    assert response.status_code == case.status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    expected_type = f"urn:kjournal:problem:{case.type}" if case.type else "about:blank"
    assert problem["type"] == expected_type, problem
    assert problem["status"] == case.status
    assert problem["title"]
    assert case.detail in problem["detail"], problem
    if case.type:
        assert problem["instance"].startswith("/v1/")
    if case.field is not None:
        assert problem["errors"][0]["field"] == case.field, problem
    return problem


@pytest.mark.parametrize("case", WRITER_CASES, ids=str)
def test_the_writer_refuses_and_produces_nothing(
    writer: RunningService, topic: str, kafka_bootstrap: str, case: Bad
):
    _check(_send(writer, case, topic), case)

    assert set(end_offsets(kafka_bootstrap, topic).values()) == {0}


@pytest.mark.parametrize("case", READER_CASES, ids=str)
def test_the_reader_refuses(reader: RunningService, topic: str, case: Bad):
    _check(_send(reader, case, topic), case)


def test_a_chunked_oversize_body_is_refused_too(
    writer: RunningService, topic: str, kafka_bootstrap: str
):
    body = b'{"events":[{"seqNr":1,"payload":"' + b"x" * (3 * 1024 * 1024) + b'"}]}'
    with httpx.Client(base_url=writer.url, timeout=30) as http:
        response = http.post(
            f"/v1/journals/{topic}/a/events",
            content=_chunks(body, 64 * 1024),  # no Content-Length: chunked
            headers={"content-type": "application/json"},
        )
        assert response.status_code == 413
        assert response.json()["type"] == "urn:kjournal:problem:request-too-large"
        # The connection stays usable.
        assert http.post(f"/v1/journals/{topic}/a/events", json=one()).status_code == 201
    assert sum(end_offsets(kafka_bootstrap, topic).values()) == 1


def test_validation_problems_list_every_field(writer: RunningService, topic: str):
    case = Bad(
        "two bad events",
        "POST",
        EVENTS,
        400,
        "validation-error",
        "(and 1 more)",
        json={"events": [{"seqNr": 0}, {"seqNr": 1, "payloadType": "yaml"}]},
    )
    problem = _check(_send(writer, case, topic), case)
    assert [(e["field"], e["pointer"]) for e in problem["errors"]] == [
        ("events[0].seqNr", "#/events/0/seqNr"),
        ("events[1].payloadType", "#/events/1/payloadType"),
    ]
