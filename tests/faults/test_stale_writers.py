"""Two writers on one journal, one of them paused or killed mid-append (issue 25): the log decides.

* A writer SIGSTOPped with an append in hand (its record held in the producer's linger), for
  longer than its timeouts, while the platform's writer appends to the same journal: resumed, its
  stale record lands after the other and is judged there. It is never answered 2xx and never
  read, before or after the replicator has it.
* A writer SIGKILLed after its record reached Kafka but before it answered: the client's resend
  of the same append through the other writer is answered as a replay, and readers hold one copy.

The second writer is a process of the test's own (tests/integration/services/support.py), on the
fault platform's Kafka, asking its reader for outcomes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kjournal.api import quote_segment

from tests.faults.platform import READER
from tests.faults.platform import TOPIC
from tests.faults.platform import WRITER
from tests.faults.platform import FaultPlatform
from tests.faults.test_faults import READS
from tests.faults.test_faults import wait_replicated
from tests.integration.services.support import RunningService
from tests.integration.services.support import end_offsets
from tests.integration.services.support import start_service

pytestmark = [
    pytest.mark.faults,
    pytest.mark.kafka,
    pytest.mark.cassandra,
    pytest.mark.spark,
    pytest.mark.timeout(600),
]

LINGER_MS = 3_000
REQUEST_TIMEOUT_MS = 3_000
READER_TIMEOUT_S = 2.0
"""The paused writer's timeouts. Its delivery timeout stays the default 15 s, longer than the
pause: the stale record still lands once resumed, so that the log, not the producer, decides."""


def _settings(fp: FaultPlatform, reader_url: str, **extra: str) -> dict[str, str]:
    return {
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": fp.endpoints.kafka_bootstrap,
        "KJOURNAL_READER__URL": reader_url,
        **extra,
    }


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    return tmp_path / "logs"


def _path(id: str, suffix: str = "") -> str:
    return f"/v1/journals/{TOPIC}/{quote_segment(id)}{suffix}"


def _records(fp: FaultPlatform) -> int:
    return sum(end_offsets(fp.endpoints.kafka_bootstrap, TOPIC).values())


def _wait(condition: Any, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout_s} s: {what}"
        time.sleep(0.02)


def _read(fp: FaultPlatform, id: str) -> list[tuple[int, Any]]:
    with httpx.Client(base_url=fp.url(READER), timeout=30) as http:
        deadline = time.monotonic() + READS.budget_s
        while True:
            response = http.get(_path(id, "/events"))
            if response.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in response.text.splitlines() if line]
    return [(line["seqNr"], line.get("payload")) for line in lines]


def _stopped(pid: int) -> bool:
    """Whether every thread of the process is stopped (SIGSTOP takes each when next scheduled)."""
    states = [
        (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        for task in Path(f"/proc/{pid}/task").iterdir()
    ]
    return all(state in "tT" for state in states)


def _unread_bytes(server_port: int, client_port: int) -> int | None:
    """The bytes of the connection client_port → server_port the server has not read yet (its
    socket's receive queue, from /proc/net/tcp), or None while it is not accepted."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = (int(address.split(":")[1], 16) for address in fields[1:3])
        if (local, remote) == (server_port, client_port):
            return int(fields[4].split(":")[1], 16)
    return None


class RawAppend:
    """An append sent on a socket of its own, so the test knows when the writer has read it."""

    def __init__(self, url: str, id: str, events: list[dict[str, Any]], headers: dict[str, str]):
        host, port = url.removeprefix("http://").split(":")
        self.server_port = int(port)
        body = json.dumps({"events": events}).encode()
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._request = (
            f"POST {_path(id, '/events')} HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{head}"
            "Connection: close\r\n\r\n"
        ).encode() + body
        self._socket = socket.create_connection((host, self.server_port), timeout=120)
        self.client_port = int(self._socket.getsockname()[1])
        self.status: int | None = None
        self.answer = b""
        self._thread = threading.Thread(target=self._exchange, daemon=True)

    def send(self) -> None:
        self._socket.sendall(self._request)
        self._thread.start()

    def _exchange(self) -> None:
        chunks = []
        with self._socket, contextlib.suppress(ConnectionError):  # a killed writer resets it
            while chunk := self._socket.recv(65536):
                chunks.append(chunk)
        self.answer = b"".join(chunks)
        self.status = int(self.answer.split(b" ", 2)[1]) if self.answer else 0

    def read_by_server(self) -> bool:
        return _unread_bytes(self.server_port, self.client_port) == 0

    def wait(self, timeout_s: float = 120.0) -> int:
        self._thread.join(timeout_s)
        assert self.status is not None, "no answer"
        return self.status


@pytest.fixture
def lingering_writer(faults_platform: FaultPlatform, logs: Path) -> Iterator[RunningService]:
    """A second writer whose records wait LINGER_MS in its producer before they are sent."""
    settings = _settings(
        faults_platform,
        faults_platform.url(READER),
        KJOURNAL_KAFKA__LINGER_MS=str(LINGER_MS),
        KJOURNAL_KAFKA__REQUEST_TIMEOUT_MS=str(REQUEST_TIMEOUT_MS),
        KJOURNAL_READER__TIMEOUT_S=str(READER_TIMEOUT_S),
    )
    service = start_service("kjournal_writer", settings, logs, ready_path="/readyz")
    yield service
    os.kill(service.pid, signal.SIGCONT)
    service.stop()


def test_a_paused_writer_s_stale_append_is_judged_where_it_lands(
    faults_platform: FaultPlatform, lingering_writer: RunningService
) -> None:
    fp = faults_platform
    id = "stale-writer"
    with httpx.Client(base_url=lingering_writer.url, timeout=60) as http:
        # the topic's metadata in its producer first, so the stale append waits in the linger,
        # not in a metadata request
        warm = http.post(_path(f"{id}-warm-up", "/events"), json={"events": [{"seqNr": 1}]})
    assert warm.status_code == 201, warm.text
    records = _records(fp)
    stale = RawAppend(
        lingering_writer.url,
        id,
        [{"seqNr": 1, "payload": {"by": "paused writer"}}],
        {"If-None-Match": "*"},
    )
    stale.send()
    _wait(stale.read_by_server, "the lingering writer reads the stale append")
    os.kill(lingering_writer.pid, signal.SIGSTOP)
    try:
        _wait(lambda: _stopped(lingering_writer.pid), "the lingering writer stops")
        stopped_at = time.monotonic()
        with httpx.Client(base_url=fp.url(WRITER), timeout=60) as http:
            fresh = http.post(
                _path(id, "/events"),
                json={"events": [{"seqNr": 1, "payload": {"by": "live writer"}}]},
                headers={"If-None-Match": "*"},
            )
        assert fresh.status_code == 201, fresh.text
        assert _records(fp) == records + 1, "the stale record landed while its writer was stopped"
        # the fault itself: stopped for longer than the linger and any of the writer's timeouts
        longest = (LINGER_MS + REQUEST_TIMEOUT_MS) / 1000 + READER_TIMEOUT_S
        time.sleep(max(0.0, stopped_at + longest - time.monotonic()))
    finally:
        os.kill(lingering_writer.pid, signal.SIGCONT)
    status = stale.wait()
    # 503: resumed past its timeouts before its record was handed to the producer (nothing sent)
    assert status in (412, 503, 504), stale.answer.decode(errors="replace")
    expected = [(1, {"by": "live writer"})]
    assert _read(fp, id) == expected
    asyncio.run(wait_replicated(fp, (TOPIC,)))
    assert _read(fp, id) == expected
    if status == 412:
        assert _records(fp) == records + 2, "a 412 for a record that never landed"
    if status == 503:
        assert _records(fp) == records + 1, "a 503 for a record that landed"


class Silence:
    """A listening socket that never answers: a reader a writer waits on for its whole timeout."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def doomed_writer(faults_platform: FaultPlatform, logs: Path) -> Iterator[RunningService]:
    """A writer whose reader never answers: once its record is in Kafka, it waits for the
    outcome (60 s), so the test can kill it between the broker's ack and its answer."""
    silence = Silence()
    settings = _settings(faults_platform, silence.url, KJOURNAL_READER__TIMEOUT_S="60")
    service = start_service("kjournal_writer", settings, logs, ready_path="/healthz")
    yield service
    service.process.kill()
    service.process.wait(30)
    silence.close()


@pytest.mark.parametrize(
    "condition", [{}, {"If-None-Match": "*"}], ids=["unconditional", "if-none-match"]
)
def test_a_resend_after_a_writer_died_past_its_produce_is_a_replay(
    faults_platform: FaultPlatform, doomed_writer: RunningService, condition: dict[str, str]
) -> None:
    fp = faults_platform
    id = f"killed-writer-{len(condition)}"
    events = [{"seqNr": n, "payload": {"n": n}} for n in (1, 2)]
    records = _records(fp)
    first = RawAppend(doomed_writer.url, id, events, condition)
    first.send()
    _wait(lambda: _records(fp) == records + 1, "the doomed writer's record lands in Kafka")
    doomed_writer.process.kill()
    assert first.wait() == 0, "the doomed writer answered before it was killed"
    with httpx.Client(base_url=fp.url(WRITER), timeout=60) as http:
        resend = http.post(_path(id, "/events"), json={"events": events}, headers=condition)
    assert resend.status_code == 200, resend.text
    assert resend.json()["replay"] is True
    assert resend.headers["etag"] == '"2"'
    expected = [(n, {"n": n}) for n in (1, 2)]
    assert _read(fp, id) == expected
    asyncio.run(wait_replicated(fp, (TOPIC,)))
    assert _read(fp, id) == expected
    assert _records(fp) == records + 2
