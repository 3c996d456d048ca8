"""A request that fails inside the service leaves its kept-alive connection usable: the real reader
app under a real uvicorn server (the services' protocol), one httpx connection for every request.

Starlette answers an unexpected exception with our 500 problem and then raises it again for the
server to log; uvicorn then closed the connection the client had just been told it could keep,
and the client's next request on it was reset.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from types import SimpleNamespace

import httpx
import pytest
import uvicorn
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal_reader.settings import Settings
from kjournal_service.http_protocol import LimitedHttpToolsProtocol

from tests.unit.services.fakes import reader_over

KEY = Key("journal", "a")
EVENTS = f"/v1/journals/{KEY.topic}/{KEY.id}/events"


def _record(seq_nr: int) -> EventRecord:
    payload = JsonPayload({"n": seq_nr, "pad": "x" * 200})
    return EventRecord(
        Event(SeqNr(seq_nr), payload=payload),
        datetime(2026, 1, 1, tzinfo=UTC),
        PartitionOffset(0, seq_nr),
    )


class _Failing:
    """A journal whose reads fail after `fail_after` events with `error` (none: they end there);
    its pointer fails."""

    def __init__(self, fail_after: int, error: Exception | None) -> None:
        self.key = KEY
        self.fail_after = fail_after
        self.error = error

    async def read(
        self, from_: int = 1, to: int = 2**63 - 1, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        for seq_nr in range(1, self.fail_after + 1):
            yield _record(seq_nr)
        if self.error is not None:
            raise self.error

    async def pointer(self) -> int:
        raise RuntimeError("a bug, not a kjournal error")

    async def view(self) -> SimpleNamespace:
        return SimpleNamespace(info=SimpleNamespace(seq_nr=self.fail_after or None))

    def events(
        self, view: object, from_: int = 1, to: int = 2**63 - 1, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        return self.read(from_, to, limit)


class _ServerJournals:
    """Every journal is the server's journal of the moment (a test swaps it)."""

    def __init__(self, server: _Server) -> None:
        self._server = server

    def journal(self, key: Key) -> _Failing:
        return self._server.journal


class _Server:
    def __init__(self, journal: _Failing) -> None:
        self.journal = journal
        settings = Settings.model_validate({"http": {"stream_chunk_bytes": 1024}})
        app = reader_over(_ServerJournals(self), settings)  # type: ignore[arg-type]
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            http=LimitedHttpToolsProtocol,
            log_config=None,
            lifespan="off",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise AssertionError("the server did not start")
            self.thread.join(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def server() -> Iterator[_Server]:
    with _Server(_Failing(0, RuntimeError("a bug"))) as server:
        yield server


@pytest.fixture
def client(server: _Server) -> Iterator[httpx.Client]:
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", limits=limits) as client:
        yield client


def _connections(client: httpx.Client) -> list[object]:
    return [id(connection) for connection in client._transport._pool.connections]  # type: ignore[attr-defined]


def _next_request_is_answered(client: httpx.Client, server: _Server) -> None:
    before = _connections(client)
    server.journal = _Failing(2, None)  # a journal that reads fine
    response = client.get(EVENTS)
    assert response.status_code == 200
    assert [json.loads(line)["seqNr"] for line in response.text.splitlines()] == [1, 2]
    assert _connections(client) == before  # the same connection, still open


def test_a_500_before_the_stream_began_keeps_the_connection(
    server: _Server, client: httpx.Client
) -> None:
    response = client.get(EVENTS)
    assert response.status_code == 500
    assert response.json()["type"] == "urn:kjournal:problem:internal-error"
    _next_request_is_answered(client, server)


def test_a_500_of_a_plain_route_keeps_the_connection(server: _Server, client: httpx.Client) -> None:
    response = client.get(f"/v1/journals/{KEY.topic}/{KEY.id}")  # a status: FastAPI's routing
    assert response.status_code == 500
    _next_request_is_answered(client, server)


def test_a_stream_broken_midway_ends_with_its_problem_and_keeps_the_connection(
    server: _Server, client: httpx.Client
) -> None:
    server.journal = _Failing(50, RuntimeError("a bug after 50 events"))  # ~12 KiB sent first
    response = client.get(EVENTS)
    assert response.status_code == 200
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["seqNr"] for line in lines[:-1]] == list(range(1, 51))
    assert lines[-1]["problem"]["type"] == "urn:kjournal:problem:internal-error"
    _next_request_is_answered(client, server)
