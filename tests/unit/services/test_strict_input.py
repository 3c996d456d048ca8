"""What the writer and the reader refuse, and how: strict JSON, strict types, single-valued query
parameters, bounded appends; and a client that goes away is not a server error."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest
from kjournal.model import Key
from kjournal_writer.settings import Settings as WriterSettings
from kjournal_writer.state import WriterState

from tests.unit.services.fakes import FakeJournal
from tests.unit.services.fakes import FakeJournals
from tests.unit.services.fakes import reader_over
from tests.unit.services.fakes import writer_over

pytestmark = pytest.mark.anyio

APPEND = "/v1/journals/journal/a/events"


@pytest.fixture
def fakes() -> FakeJournals:
    return FakeJournals()


@pytest.fixture
async def writer(fakes: FakeJournals) -> AsyncIterator[httpx.AsyncClient]:
    settings = WriterSettings.model_validate(
        {"http": {"max_events_per_append": 100, "offload_body_bytes": 1024}}
    )
    app = writer_over(fakes, settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://writer") as client:
        yield client


def _nothing_done(fakes: FakeJournals) -> bool:
    return not any(journal.calls for journal in fakes.journals.values())


async def _post(writer: httpx.AsyncClient, body: str) -> httpx.Response:
    return await writer.post(APPEND, content=body, headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('{"events": [{"seqNr": "1"}]}', "events[0].seqNr"),
        ('{"events": [{"seqNr": true}]}', "events[0].seqNr"),
        ('{"events": [{"seqNr": 1.5}]}', "events[0].seqNr"),
        ('{"events": [{"seqNr": 9007199254740993.0}]}', "events[0].seqNr"),
        ('{"events": [{"seqNr": 1}], "expireAfter": 1000.5}', "expireAfter"),
        ('{"events": [{"seqNr": 1, "seqNr": 2}]}', "body"),
        ('{"events": [{"seqNr": 1}], "events": [{"seqNr": 2}]}', "body"),
        ('{"events": [{"seqNr": 1, "payload": {"a": 1, "a": 2}}]}', "body"),
        ('{"events": [{"seqNr": 1}], "headers": {"": "x"}}', "headers"),
        ('{"events": [{"seqNr": NaN}]}', "body"),
    ],
)
async def test_bodies_that_say_one_thing_twice_or_loosely_are_refused(
    writer: httpx.AsyncClient, fakes: FakeJournals, body: str, where: str
) -> None:
    response = await _post(writer, body)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["type"] == "urn:kjournal:problem:validation-error"
    assert problem["errors"][0]["field"].startswith(where)
    assert _nothing_done(fakes)


@pytest.mark.parametrize(
    "payload",
    ['"payloadType": "json"', '"payloadType": "text"', '"payloadType": "json", "payload": null'],
)
async def test_a_payload_type_without_a_payload_is_refused(
    writer: httpx.AsyncClient, fakes: FakeJournals, payload: str
) -> None:
    response = await _post(writer, '{"events": [{"seqNr": 1, ' + payload + "}]}")
    assert response.status_code == 400
    assert response.json()["type"] == "urn:kjournal:problem:invalid-payload"
    assert _nothing_done(fakes)


async def test_too_many_events_are_refused_before_any_is_validated(
    writer: httpx.AsyncClient, fakes: FakeJournals
) -> None:
    body = {"events": [{"seqNr": n} for n in range(1, 102)] + [{"seqNr": "not even valid"}]}
    response = await _post(writer, json.dumps(body))
    assert response.status_code == 400
    problem = response.json()
    assert problem["type"] == "urn:kjournal:problem:too-many-events"
    assert (problem["count"], problem["limit"]) == (102, 100)
    assert _nothing_done(fakes)


async def test_a_whole_number_written_with_a_fraction_is_that_integer(
    writer: httpx.AsyncClient, fakes: FakeJournals
) -> None:
    # JSON Schema's integer, as the OpenAPI document states it: 7.0 is 7 (read exactly).
    response = await _post(writer, '{"events": [{"seqNr": 7.0}, {"seqNr": 8}], "expireAfter": 6e4}')
    assert response.status_code == 201, response.text
    ((_, (events, _, _)),) = next(iter(fakes.journals.values())).calls
    assert [event.seq_nr for event in events.events] == [7, 8]
    assert events.metadata.expire_after is not None
    assert events.metadata.expire_after.nanos == 60_000 * 1_000_000


async def test_a_large_body_is_parsed_off_the_event_loop(
    writer: httpx.AsyncClient, fakes: FakeJournals
) -> None:
    body = json.dumps({"events": [{"seqNr": n, "payload": "x" * 30} for n in range(1, 101)]})
    assert len(body) > 1024
    response = await _post(writer, body)
    assert response.status_code == 201, response.text
    (journal,) = fakes.journals.values()
    assert journal.calls[0][0] == "append"


async def test_a_repeated_query_parameter_is_refused(writer: httpx.AsyncClient) -> None:
    response = await writer.delete(APPEND, params=[("to", "1"), ("to", "2")])
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "to"


async def test_a_query_parameter_the_route_does_not_take_is_refused(
    writer: httpx.AsyncClient, fakes: FakeJournals
) -> None:
    for response in (
        await writer.delete(APPEND, params={"to": "1", "from": "1"}),
        await writer.post(APPEND, params={"dryRun": "1"}, json={"events": [{"seqNr": 1}]}),
    ):
        assert response.status_code == 400, response.text
        assert response.json()["errors"][0]["detail"] == "not a parameter of this route"
    assert _nothing_done(fakes)


async def test_a_client_gone_mid_body_is_499_and_no_error(
    fakes: FakeJournals, caplog: pytest.LogCaptureFixture
) -> None:
    app = writer_over(fakes)
    sent: list[MutableMapping[str, Any]] = []
    messages: Iterator[dict[str, Any]] = iter(
        [
            {"type": "http.request", "body": b'{"events": [', "more_body": True},
            {"type": "http.disconnect"},
        ]
    )

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "path": APPEND,
        "raw_path": APPEND.encode(),
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8081),
        "scheme": "http",
        "root_path": "",
    }
    with caplog.at_level("INFO"):
        await app(scope, receive, send)
    assert sent[0]["status"] == 499
    assert "client disconnected" in caplog.text
    assert "ERROR" not in caplog.text
    metrics = WriterState.of(app).metrics.exposition()[0].decode()
    assert 'status="499"' in metrics
    assert 'status="500"' not in metrics
    assert _nothing_done(fakes)


async def test_from_after_to_reads_nothing() -> None:
    journal = FakeJournal(Key("journal", "a"))
    app = reader_over(FakeJournals(journal))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://reader") as client:
        response = await client.get("/v1/journals/journal/a/events", params={"from": 5, "to": 2})
    assert response.status_code == 200
    assert response.text == ""


def _nested(depth: int, kind: str) -> str:
    opening, closing = ("[", "]") if kind == "array" else ('{"a":', "}")
    return opening * depth + "1" + closing * depth


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize(
    "template",
    [
        '{"events": [{"seqNr": 1, "payload": %s}]}',
        '{"events": [{"seqNr": 1}], "metadata": {"header": %s}}',
        '{"events": [{"seqNr": 1}], "expireAfter": %s}',
        "%s",
    ],
    ids=["payload", "metadata", "expireAfter", "body"],
)
async def test_a_body_nested_10000_deep_is_too_deep_and_nothing_is_written(
    writer: httpx.AsyncClient, fakes: FakeJournals, kind: str, template: str
) -> None:
    # Python's JSON parser recurses once per level: 10 000 levels were a RecursionError (a 500).
    response = await _post(writer, template % _nested(10_000, kind))
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["type"] == "urn:kjournal:problem:too-deep"
    assert problem["limit"] == WriterSettings().http.max_json_depth
    assert _nothing_done(fakes)


async def test_a_mark_body_nested_too_deep_is_refused(
    writer: httpx.AsyncClient, fakes: FakeJournals
) -> None:
    response = await writer.post(
        "/v1/journals/journal/a/marks",
        content='{"id": ' + _nested(10_000, "array") + "}",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["type"] == "urn:kjournal:problem:too-deep"
    assert _nothing_done(fakes)


async def test_the_depth_limit_counts_levels_not_brackets_in_strings(
    fakes: FakeJournals,
) -> None:
    app = writer_over(fakes, WriterSettings.model_validate({"http": {"max_json_depth": 20}}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://writer") as writer:
        statuses = await _depth_cases(writer)
    assert statuses == [201, 201, 201, 400]
    assert len(next(iter(fakes.journals.values())).calls) == 3


async def _depth_cases(writer: httpx.AsyncClient) -> list[int]:
    # The body is 3 levels before the payload: {"events": [{"payload": ...}]}.
    event = '{"events": [{"seqNr": 1, "payload": $}]}'
    at_limit = event.replace("$", _nested(17, "array"))
    over = event.replace("$", _nested(18, "object"))
    text = '"' + "[{" * 5000 + '\\\\", "payloadType": "text"'  # ends in an escaped backslash
    brackets = event.replace("$", text)
    wide = json.dumps({"events": [{"seqNr": n, "payload": [[n]]} for n in range(1, 101)]})
    statuses = []
    for body in (at_limit, brackets, wide, over):  # wide: 300 arrays, none deeper than 5
        response = await _post(writer, body)
        statuses.append(response.status_code)
        if response.status_code == 400:
            assert response.json()["type"] == "urn:kjournal:problem:too-deep", response.text
    return statuses
