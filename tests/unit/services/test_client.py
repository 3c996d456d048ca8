"""The clients' behaviour on a mock transport: parsing, problems → errors, what is retried."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest
from kjournal.api.convert import event_record_to_json
from kjournal.client import AsyncClient
from kjournal.client import Client
from kjournal.client import RetryPolicy
from kjournal.client._base import decode_line
from kjournal.errors import CassandraUnavailable
from kjournal.errors import DeadlineExceeded
from kjournal.errors import FormatError
from kjournal.errors import KafkaUnavailable
from kjournal.errors import OutcomeUnknown
from kjournal.errors import RecordTooLarge
from kjournal.errors import Unavailable
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr

from tests.unit.services.test_convert import _record

KEY = Key("journal", "a/b")
FAST = RetryPolicy(attempts=3, backoff_s=0.0, max_backoff_s=0.0)


def _line(seq_nr: int) -> str:
    record = _record(JsonPayload(seq_nr))
    data = event_record_to_json(record)
    data["seqNr"] = seq_nr
    return json.dumps(data) + "\n"


def _problem(status: int, slug: str, detail: str = "x", /, **extra: object) -> dict[str, object]:
    return {
        "type": f"urn:kjournal:problem:{slug}",
        "title": slug,
        "status": status,
        "detail": detail,
        **extra,
    }


def _problem_response(status: int, slug: str, **extra: int) -> httpx.Response:
    return httpx.Response(
        status,
        json=_problem(status, slug, **extra),
        headers={"content-type": "application/problem+json", "retry-after": "0"},
    )


def _client(handler: Callable[[httpx.Request], httpx.Response]) -> Client:
    return Client("http://w", "http://r", retry=FAST, transport=httpx.MockTransport(handler))


def test_a_read_resumes_after_the_last_event_when_a_stream_breaks():
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        if len(seen) == 1:
            body = (
                _line(1)
                + _line(2)
                + json.dumps({"problem": _problem(503, "kafka-unavailable")})
                + "\n"
            )
        else:
            body = _line(3)
        return httpx.Response(200, text=body, headers={"content-type": "application/x-ndjson"})

    with _client(handler) as client:
        assert [r.seq_nr for r in client.read(KEY, limit=10)] == [1, 2, 3]
    assert seen == [
        {"from": "1", "to": str(2**63 - 1), "limit": "10"},
        {"from": "3", "to": str(2**63 - 1), "limit": "8"},
    ]


def test_a_stream_ended_by_a_permanent_problem_raises_it():
    def handler(request: httpx.Request) -> httpx.Response:
        body = _line(1) + json.dumps({"problem": _problem(500, "format-error", "bad bytes")}) + "\n"
        return httpx.Response(200, text=body)

    with _client(handler) as client, pytest.raises(FormatError, match="bad bytes"):
        list(client.read(KEY))


def test_gets_are_retried_on_503_then_give_up():
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return _problem_response(503, "cassandra-unavailable")

    with _client(handler) as client, pytest.raises(CassandraUnavailable):
        client.pointer(KEY)
    assert calls == 3


def test_appends_deletes_and_marks_are_retried_but_a_sent_purge_is_not():
    """A resent append is dropped as a duplicate if its first copy landed (so retrying is safe);
    a second purge would erase what was appended in between."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if len(calls) % 2 == 1:
            return _problem_response(504, "outcome-unknown")
        if request.method == "POST" and request.url.path.endswith("/events"):
            body = {"partition": 0, "offset": 1, "from": 1, "to": 1}
            return httpx.Response(201, json={**body, "timestamp": "2025-01-01T00:00:00Z"})
        return httpx.Response(202, json={"partition": 0, "offset": 1, "id": "m"})

    with _client(handler) as client:
        client.append(KEY, [Event(SeqNr(1))])
        client.delete(KEY, 1)
        client.mark(KEY)
        assert calls == ["POST", "POST", "DELETE", "DELETE", "POST", "POST"]
        with pytest.raises(OutcomeUnknown):
            client.purge(KEY)
        assert calls[-1] == "DELETE"
        assert len(calls) == 7


def test_retries_stop_when_the_budget_is_spent():
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(503, json=_problem(503, "kafka-unavailable"))

    policy = RetryPolicy(budget_s=0.3, backoff_s=0.05, max_backoff_s=0.05)
    transport = httpx.MockTransport(handler)
    client = Client("http://w", "http://r", retry=policy, transport=transport)
    with client, pytest.raises(KafkaUnavailable):
        client.append(KEY, [Event(SeqNr(1))])
    assert 3 <= calls <= 12


def test_appends_are_retried_when_no_connection_could_be_opened():
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise httpx.ConnectError("refused", request=request)
        assert request.url.raw_path == b"/v1/journals/journal/a%2Fb/events"
        assert json.loads(request.content) == {"events": [{"seqNr": 1}]}
        return httpx.Response(
            201,
            json={
                "partition": 1,
                "offset": 5,
                "from": 1,
                "to": 1,
                "timestamp": "2025-01-01T00:00:00Z",
            },
        )

    with _client(handler) as client:
        result = client.append(KEY, [Event(SeqNr(1))])
    assert (calls, result.partition_offset) == (3, PartitionOffset(1, 5))


def test_a_read_timeout_on_a_write_is_deadline_exceeded_not_retried():
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ReadTimeout("slow", request=request)

    with _client(handler) as client, pytest.raises(DeadlineExceeded):
        client.purge(KEY)
    assert calls == 1


def test_problems_become_errors_with_their_members():
    def handler(request: httpx.Request) -> httpx.Response:
        return _problem_response(413, "record-too-large", size=5, limit=4)

    with _client(handler) as client, pytest.raises(RecordTooLarge) as raised:
        client.append(KEY, [Event(SeqNr(1))])
    assert (raised.value.size, raised.value.limit) == (5, 4)


def test_a_non_problem_error_page_is_still_an_error():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>bad gateway</html>")

    with _client(handler) as client, pytest.raises(Unavailable, match="502"):
        client.replication("journal")


def test_not_found_is_none_for_pointer_and_status():
    def handler(request: httpx.Request) -> httpx.Response:
        return _problem_response(404, "journal-not-found")

    with _client(handler) as client:
        assert client.pointer(KEY) is None
        assert client.status(KEY) is None


def test_decode_line():
    record = decode_line(_line(4))
    assert isinstance(record, EventRecord)
    assert record.seq_nr == 4
    with pytest.raises(FormatError):
        decode_line("[1]")
    with pytest.raises(FormatError):
        decode_line("{oops")


def test_retry_after_is_honoured_within_the_cap():
    policy = RetryPolicy(backoff_s=0.1, max_backoff_s=2.0)
    assert policy.delay(1, "1") == 1.0
    assert policy.delay(1, "30") == 2.0
    assert 0.05 <= policy.delay(1) <= 0.1
    assert policy.delay(10) <= 2.0


def test_the_async_client_reads_and_resumes():
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return _problem_response(503, "kafka-unavailable")
        return httpx.Response(200, text=_line(1) + _line(2))

    async def run() -> list[int]:
        async with AsyncClient(
            None, "http://r", retry=FAST, transport=httpx.MockTransport(handler)
        ) as client:
            return [r.seq_nr async for r in client.read(KEY)]

    assert asyncio.run(run()) == [1, 2]
    assert calls == 2
