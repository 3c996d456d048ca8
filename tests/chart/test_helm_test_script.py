"""The `helm test` pod's script, as the chart renders it, run here against a local HTTP server in
the writer's and the reader's place: it waits out a service that is not ready yet, and says in
one line why it failed otherwise."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

import pytest

from tests.chart.conftest import Render
from tests.chart.conftest import by_kind

TOKEN = "a-test-token"


class _Service(ThreadingHTTPServer):
    """Answers appends with `append_answers` in turn (the last one repeated), reads with the
    event once `reads_empty` reads came back empty; remembers what was asked."""

    def __init__(self, append_answers: list[tuple[int, str]], reads_empty: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.append_answers = append_answers
        self.reads_empty = reads_empty
        self.appended: list[dict[str, object]] = []
        self.authorization: set[str | None] = set()
        self.reads = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Service

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self, status: int, body: str, kind: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        service = self.server
        service.authorization.add(self.headers.get("authorization"))
        length = int(self.headers.get("content-length", "0"))
        service.appended.append(json.loads(self.rfile.read(length)))
        answers = service.append_answers
        status, body = answers.pop(0) if len(answers) > 1 else answers[0]
        self._answer(status, body, "application/json")

    def do_GET(self) -> None:
        service = self.server
        service.authorization.add(self.headers.get("authorization"))
        service.reads += 1
        if service.reads <= service.reads_empty or not service.appended:
            self._answer(200, "", "application/x-ndjson")
            return
        event = service.appended[-1]["events"][0]  # type: ignore[index]
        self._answer(200, json.dumps(event) + "\n", "application/x-ndjson")


@pytest.fixture(scope="module")
def script(render: Render) -> str:
    pods = by_kind(render(sets={"tests.tokenSecret.name": "kj-token"}), "Pod")
    container = pods["kj-kjournal-test"]["spec"]["containers"][0]
    assert container["command"] == ["python", "-c"]
    text: str = container["args"][0]
    return text


def _run(script: str, service: _Service) -> subprocess.CompletedProcess[str]:
    here = re.sub(r'(writer|reader) = "http://[^"]+"', rf'\1 = "{service.url}"', script)
    assert here.count(service.url) == 2, "the script names the writer and reader URLs otherwise"
    return subprocess.run(
        [sys.executable, "-c", here],
        env={"KJOURNAL_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def serving() -> Iterator[list[_Service]]:
    started: list[_Service] = []
    yield started
    for service in started:
        service.shutdown()
        service.server_close()


def _start(serving: list[_Service], service: _Service) -> _Service:
    threading.Thread(target=service.serve_forever, daemon=True).start()
    serving.append(service)
    return service


def test_it_waits_for_a_writer_not_ready_yet_then_reads_the_event_back(
    script: str, serving: list[_Service]
) -> None:
    service = _start(
        serving,
        _Service(
            [(503, '{"title": "not ready"}'), (504, '{"title": "no ack yet"}'), (201, "{}")],
            reads_empty=2,
        ),
    )
    done = _run(script, service)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(service.appended) == 3
    assert service.reads == 3
    assert service.authorization == {f"Bearer {TOKEN}"}
    assert "read back:" in done.stdout


def test_a_refused_append_fails_at_once_with_the_problem(
    script: str, serving: list[_Service]
) -> None:
    problem = '{"title": "the token has expired", "status": 401}'
    service = _start(serving, _Service([(401, problem)]))
    done = _run(script, service)
    assert done.returncode == 1
    assert len(service.appended) == 1
    assert f"append: 401 {problem}" in done.stderr


def test_a_resent_append_answered_as_the_replay_of_the_first_passes(
    script: str, serving: list[_Service]
) -> None:
    """The writer could not learn the first append's outcome (504); the resend meets the taken
    copy and is answered 200 with `replay`, and the script reads the event back."""
    unknown = '{"title": "Outcome unknown: retry", "status": 504}'
    replay = '{"partition": 0, "offset": 3, "from": 1, "to": 1, "replay": true, "seqNr": 1}'
    service = _start(serving, _Service([(504, unknown), (200, replay)]))
    done = _run(script, service)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(service.appended) == 2
    assert f"504 {unknown}; asking again" in done.stdout
    assert "read back:" in done.stdout


def test_a_200_that_is_no_replay_fails(script: str, serving: list[_Service]) -> None:
    service = _start(serving, _Service([(200, '{"replay": false}')]))
    done = _run(script, service)
    assert done.returncode == 1
    assert 'append: 200 {"replay": false}' in done.stderr
