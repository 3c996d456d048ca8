"""Limits against abusive clients, on the real writer process over raw sockets: oversized request
heads (414, 431), a head or body that arrives too slowly (408, slow-loris), each a problem body
with the connection closed, and nothing written to Kafka; a well-behaved keep-alive client is
not affected."""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.integration.services.conftest import WriterStarter
from tests.integration.services.support import RunningService
from tests.integration.services.support import end_offsets

pytestmark = [pytest.mark.kafka]

TIMEOUT_S = 1.0
BODY = json.dumps({"events": [{"seqNr": 1, "payload": {"a": 1}}]}).encode()


@pytest.fixture(scope="module")
def strict_writer(start_writer: WriterStarter) -> RunningService:
    return start_writer(
        {
            "KJOURNAL_HTTP__MAX_HEAD_BYTES": "4096",
            "KJOURNAL_HTTP__MAX_HEADER_COUNT": "20",
            "KJOURNAL_HTTP__HEADER_TIMEOUT_S": str(TIMEOUT_S),
            "KJOURNAL_HTTP__BODY_TIMEOUT_S": str(TIMEOUT_S),
        },
        ready_path="/healthz",
    )


def _connect(service: RunningService) -> socket.socket:
    host, port = service.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _answer(
    sock: socket.socket, *, then_closed: bool = True
) -> tuple[int, dict[str, str], dict[str, object], bool]:
    """(status, headers, JSON body, whether the server then closed the connection: only asked
    if `then_closed`)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    closed = then_closed and sock.recv(1) == b""
    return int(status_line.split()[1]), headers, json.loads(body[:length] or b"{}"), closed


def _head(topic: str, extra: str = "", target: str | None = None, body: bytes = BODY) -> bytes:
    target = target or f"/v1/journals/{topic}/j-1/events"
    return (
        f"POST {target} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n{extra}\r\n"
    ).encode()


def _expect_problem(sock: socket.socket, status: int, slug: str, detail: str) -> str:
    code, headers, problem, closed = _answer(sock)
    assert code == status, problem
    assert headers["content-type"] == "application/problem+json"
    assert problem["type"] == f"urn:kjournal:problem:{slug}"
    assert detail in str(problem["detail"])
    assert closed, "the server kept the connection open"
    return str(problem["detail"])


def test_oversized_heads(strict_writer: RunningService, topic: str, kafka_bootstrap: str):
    with _connect(strict_writer) as sock:
        many = "".join(f"x-field-{n}: {n}\r\n" for n in range(30))
        sock.sendall(_head(topic, many) + BODY)
        _expect_problem(sock, 431, "headers-too-large", "more than 20 header fields")
    with _connect(strict_writer) as sock:
        sock.sendall(_head(topic, f"x-big: {'b' * 5000}\r\n") + BODY)
        _expect_problem(sock, 431, "headers-too-large", "exceed 4096 bytes")
    with _connect(strict_writer) as sock:
        sock.sendall(_head(topic, target=f"/v1/journals/{topic}/{'i' * 5000}/events") + BODY)
        _expect_problem(sock, 414, "uri-too-long", "request target exceeds 4096 bytes")
    assert set(end_offsets(kafka_bootstrap, topic).values()) == {0}


def test_slow_clients_are_cut_off(strict_writer: RunningService, topic: str, kafka_bootstrap: str):
    with _connect(strict_writer) as sock:  # connects and says nothing
        started = time.monotonic()
        _expect_problem(sock, 408, "request-timeout", "request head did not arrive")
        assert time.monotonic() - started >= TIMEOUT_S * 0.9
    with _connect(strict_writer) as sock:  # slow-loris: a header line now and then
        sock.sendall(f"POST /v1/journals/{topic}/j-1/events HTTP/1.1\r\n".encode())
        for n in range(3):
            sock.sendall(f"x-slow-{n}: {n}\r\n".encode())
            time.sleep(TIMEOUT_S / 4)
        _expect_problem(sock, 408, "request-timeout", "request head did not arrive")
    with _connect(strict_writer) as sock:  # the head at once, then half the body, then nothing
        sock.sendall(_head(topic) + BODY[: len(BODY) // 2])
        _expect_problem(sock, 408, "request-timeout", "request body did not arrive")
    assert set(end_offsets(kafka_bootstrap, topic).values()) == {0}


def test_a_patient_keep_alive_client_is_served(strict_writer: RunningService, topic: str):
    with _connect(strict_writer) as sock:
        for seq_nr in (1, 2):
            body = json.dumps({"events": [{"seqNr": seq_nr}]}).encode()
            # (Not a replace of the length's digits in a head made for BODY: the random topic name
            # can hold those digits too, and the request then names another topic.)
            sock.sendall(_head(topic, body=body) + body)
            status, _, answer, _ = _answer(sock, then_closed=False)
            assert status == 201, answer
            # idle between requests for longer than the head timeout: not a slow head
            time.sleep(TIMEOUT_S * 1.5)
