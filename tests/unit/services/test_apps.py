"""The writer and reader apps over ASGI with fake journals: routing, validation, problems,
limits and streaming, without Kafka or Cassandra (no lifespan runs)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from typing import Any

import httpx
import pytest
from kjournal.errors import CassandraUnavailable
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_writer.settings import Settings as WriterSettings

from tests.unit.services.fakes import FakeJournal
from tests.unit.services.fakes import FakeJournals
from tests.unit.services.fakes import reader_over
from tests.unit.services.fakes import writer_over

pytestmark = pytest.mark.anyio


def _records(count: int) -> list[EventRecord]:
    return [
        EventRecord(
            Event(SeqNr(n), payload=JsonPayload({"n": n})),
            datetime(2025, 1, 1, tzinfo=UTC),
            PartitionOffset(0, n),
        )
        for n in range(1, count + 1)
    ]


@pytest.fixture
def fakes() -> FakeJournals:
    return FakeJournals()


@pytest.fixture
def journals(fakes: FakeJournals) -> dict[Key, FakeJournal]:
    return fakes.journals


@pytest.fixture
async def writer(fakes: FakeJournals) -> AsyncIterator[httpx.AsyncClient]:
    app = writer_over(fakes, WriterSettings.model_validate({"http": {"max_body_bytes": 4096}}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://writer") as client:
        yield client


async def test_an_append_reaches_the_journal_named_by_the_raw_path(
    writer: httpx.AsyncClient, journals: dict[Key, FakeJournal]
):
    response = await writer.post(
        "/v1/journals/journal/order%2F1%3Fx/events",
        json={"events": [{"seqNr": 1, "payload": {"a": 1}}, {"seqNr": 2}]},
    )
    assert response.status_code == 201, response.text
    assert response.json()["to"] == 2
    (key,) = journals
    assert key == Key("journal", "order/1?x")
    (call,) = journals[key].calls
    assert call[0] == "append"


async def test_invalid_appends_never_reach_the_journal(
    writer: httpx.AsyncClient, journals: dict[Key, FakeJournal]
):
    bodies: list[dict[str, Any]] = [
        {"events": []},
        {"events": [{"seqNr": 2}, {"seqNr": 1}]},
        {"events": [{"seqNr": 0}]},
    ]
    for body in bodies:
        response = await writer.post("/v1/journals/journal/a/events", json=body)
        assert response.status_code == 400
    assert all(not journal.calls for journal in journals.values())


async def test_bodies_over_the_limit_are_refused_before_parsing(
    writer: httpx.AsyncClient, journals: dict[Key, FakeJournal]
):
    big = {"events": [{"seqNr": 1, "payload": "x" * 5000}]}
    response = await writer.post("/v1/journals/journal/a/events", json=big)
    assert response.status_code == 413
    assert response.json()["type"] == "urn:kjournal:problem:request-too-large"

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 1000

    response = await writer.post(
        "/v1/journals/journal/a/events",
        content=chunks(),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 413
    assert not journals


async def test_a_body_that_is_not_json_is_refused(writer: httpx.AsyncClient):
    response = await writer.post(
        "/v1/journals/journal/a/events", content=b"events", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 415
    assert response.headers["content-type"] == "application/problem+json"


async def test_writer_routes(writer: httpx.AsyncClient, journals: dict[Key, FakeJournal]):
    assert (
        await writer.delete("/v1/journals/journal/a/events", params={"to": 3})
    ).status_code == 202
    assert (await writer.delete("/v1/journals/journal/a")).status_code == 202
    marked = await writer.post("/v1/journals/journal/a/marks")
    assert marked.status_code == 201
    assert len(marked.json()["id"]) == 36  # a random UUID
    assert (await writer.post("/v1/journals/journal/a/marks", json={"id": "m"})).json()["id"] == "m"
    assert [name for name, _ in journals[Key("journal", "a")].calls] == [
        "delete",
        "purge",
        "mark",
        "mark",
    ]
    assert (await writer.get("/healthz")).json() == {"status": "ok"}
    assert "kjournal_http_requests_total" in (await writer.get("/metrics")).text


async def test_appends_served_by_the_hot_route_answer_as_routed_requests_do(
    writer: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
):
    path = "/v1/journals/journal/a/events"
    invalid = await writer.post(path, json={"events": [{"seqNr": 0}]})
    assert invalid.status_code == 400
    assert invalid.json()["type"] == "urn:kjournal:problem:validation-error"
    assert invalid.json()["errors"][0]["pointer"] == "#/events/0/seqNr"
    assert invalid.json()["instance"] == path
    assert (await writer.put(path, json={"events": [{"seqNr": 1}]})).status_code == 405

    async def broken(self: FakeJournal, *args: Any) -> None:
        raise RuntimeError("broken")

    monkeypatch.setattr(FakeJournal, "append", broken)
    failed = await writer.post(path, json={"events": [{"seqNr": 1}]})
    assert failed.status_code == 500
    assert failed.headers["content-type"] == "application/problem+json"
    assert failed.json()["type"] == "urn:kjournal:problem:internal-error"
    assert failed.json()["traceId"] in failed.json()["detail"]


async def test_appends_are_measured_under_their_route_template(writer: httpx.AsyncClient):
    assert (
        await writer.post("/v1/journals/journal/a/events", json={"events": [{"seqNr": 1}]})
    ).is_success
    metrics = (await writer.get("/metrics")).text
    assert (
        'kjournal_http_requests_total{method="POST",route="/v1/journals/{topic}/{id}/events",'
        'service="writer",status="201"} 1.0'
    ) in metrics


async def test_the_writer_openapi_documents_problems_not_422(writer: httpx.AsyncClient):
    schema = (await writer.get("/openapi.json")).json()
    append = schema["paths"]["/v1/journals/{topic}/{id}/events"]["post"]
    assert append["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/AppendRequest"
    )
    assert "422" not in append["responses"]
    assert "application/problem+json" in append["responses"]["400"]["content"]
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    assert "AppendRequest" in schema["components"]["schemas"]


def _reader(journal: FakeJournal) -> httpx.AsyncClient:
    settings = ReaderSettings.model_validate({"http": {"stream_chunk_bytes": 100}})
    app = reader_over(FakeJournals(journal), settings)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://reader")


async def test_events_stream_as_ndjson():
    journal = FakeJournal(Key("journal", "a"), _records(50))
    async with _reader(journal) as reader:
        response = await reader.get("/v1/journals/journal/a/events", params={"from": 2, "limit": 7})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["seqNr"] for line in lines] == list(range(1, 51))
    assert journal.calls == [("read", (2, 2**63 - 1, 7))]


async def test_a_failure_before_the_first_event_is_a_problem_response():
    journal = FakeJournal(Key("journal", "a"), [], fail_at=0, error=CassandraUnavailable("down"))
    async with _reader(journal) as reader:
        response = await reader.get("/v1/journals/journal/a/events")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.json()["type"] == "urn:kjournal:problem:cassandra-unavailable"


async def test_a_failure_mid_stream_ends_it_with_a_problem_line():
    journal = FakeJournal(
        Key("journal", "a"), _records(5), fail_at=3, error=CassandraUnavailable("gone")
    )
    async with _reader(journal) as reader:
        response = await reader.get("/v1/journals/journal/a/events")
    assert response.status_code == 200
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line.get("seqNr") for line in lines[:-1]] == [1, 2, 3]
    assert lines[-1]["problem"]["type"] == "urn:kjournal:problem:cassandra-unavailable"
    assert lines[-1]["problem"]["detail"] == "gone"


async def test_the_reader_openapi_documents_the_line_shapes():
    async with _reader(FakeJournal(Key("journal", "a"))) as reader:
        schema = (await reader.get("/openapi.json")).json()
    assert {"EventOut", "JournalIdOut", "JournalStatusOut"} <= set(schema["components"]["schemas"])
    events = schema["paths"]["/v1/journals/{topic}/{id}/events"]["get"]["responses"]["200"]
    assert events["content"]["application/x-ndjson"]["schema"]["$ref"].endswith("/EventOut")
