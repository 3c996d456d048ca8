"""A reader restarted under racing conditional appends: outcomes asked across the restart are the
rule's (docs/concurrency.md, "The fold": how it survives a reader restart).

Client threads race conditional appends on a few journals through one writer, with replication
alongside, while the writer's reader is stopped and started again on the same port. While it is
down the writer answers 504 outcome-unknown and the clients resend once it is back (as
`kjournal.client` does); the new reader's fold starts at pointer2 + 1 and decides the rest.
However the restart falls, no dropped append is answered 201: per journal, the appends answered
201 (or 200, a replay answering a resend) are exactly seqNrs 1..N, with the winners' payloads,
before and after replication.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services import concurrency as c
from tests.integration.services.conftest import kafka_settings
from tests.integration.services.conftest import reader_settings
from tests.integration.services.conftest import writer_limits
from tests.integration.services.support import RunningService
from tests.integration.services.support import start_service
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

THREADS = 8
JOURNALS = 2
ATTEMPTS = 15


class _Reader:
    """The reader process, which the test stops and starts again on the same port."""

    def __init__(self, platform: Endpoints, keyspace: str, logs: Path) -> None:
        self._settings = reader_settings(platform, keyspace)
        self._logs = logs
        self.service = start_service("kjournal_reader", self._settings, logs, ready_path="/readyz")
        self.url = self.service.url
        self.restarted = threading.Event()

    def restart(self) -> None:
        port = int(self.url.rsplit(":", 1)[1])
        assert self.service.stop(), self.service.log()
        self.service = start_service(
            "kjournal_reader", self._settings, self._logs, ready_path="/readyz", port=port
        )
        self.restarted.set()


@pytest.fixture
def restartable_reader(
    platform: Endpoints, services_keyspace: str, service_logs: Path
) -> Iterator[_Reader]:
    reader = _Reader(platform, services_keyspace, service_logs)
    yield reader
    assert reader.service.stop(), reader.service.log()


@pytest.fixture
def its_writer(
    platform: Endpoints, restartable_reader: _Reader, service_logs: Path
) -> Iterator[RunningService]:
    service = start_service(
        "kjournal_writer",
        {
            **kafka_settings(platform),
            **writer_limits(),
            "KJOURNAL_READER__URL": restartable_reader.url,
        },
        service_logs,
        ready_path="/readyz",
    )
    yield service
    assert service.stop(), service.log()


def _when_up(http: httpx.Client, reader: str) -> None:
    """Until the reader answers its readiness (it may be restarting)."""
    while True:
        try:
            if http.get(f"{reader}/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        threading.Event().wait(0.05)  # polling a condition, not waiting out a duration


def _pointer(http: httpx.Client, reader: str, topic: str, id: str) -> int:
    while True:
        try:
            return c.pointer(http, reader, topic, id)
        except httpx.TransportError:
            _when_up(http, reader)


def _append(
    http: httpx.Client,
    writer: str,
    reader: str,
    topic: str,
    id: str,
    seq_nr: int,
    payload: dict[str, int],
) -> c.Answer:
    """The conditional append, resent while it is answered 504 (once the reader is up again)."""
    resent = 0
    while True:
        answer = c.append(
            http, writer, topic, id, [{"seqNr": seq_nr, "payload": payload}], seq_nr - 1
        )
        if answer.status != 504:
            return c.Answer(answer.status, answer.body, answer.etag, resent + answer.resent)
        resent += 1 + answer.resent
        _when_up(http, reader)


def test_outcomes_asked_across_a_reader_restart_are_the_rules(
    platform: Endpoints,
    services_keyspace: str,
    restartable_reader: _Reader,
    its_writer: RunningService,
    topic: str,
    request: pytest.FixtureRequest,
) -> None:
    lock = threading.Lock()
    won: dict[str, dict[int, dict[str, int]]] = {f"restart-{j}": {} for j in range(JOURNALS)}
    statuses: Counter[str] = Counter()
    resent = 0
    unexpected: list[str] = []
    answered = threading.Semaphore(0)

    def client(number: int) -> None:
        nonlocal resent
        id = f"restart-{number % JOURNALS}"
        with httpx.Client(timeout=60) as http:
            for attempt in range(ATTEMPTS):
                p = _pointer(http, restartable_reader.url, topic, id)
                payload = {"thread": number, "attempt": attempt}
                answer = _append(
                    http, its_writer.url, restartable_reader.url, topic, id, p + 1, payload
                )
                with lock:
                    resent += answer.resent
                    label = "200 replay" if answer.replay else str(answer.status)
                    statuses[label] += 1
                    if answer.status == 201 or answer.replay:
                        if p + 1 in won[id]:
                            unexpected.append(f"{id} seqNr {p + 1} won twice: {answer}")
                        won[id][p + 1] = payload
                    elif answer.status not in (409, 412):
                        unexpected.append(f"neither taken nor lost: {answer}")
                answered.release()

    with c.replication(platform, services_keyspace) as replication:
        done = threading.Event()

        def replicate() -> None:
            while not done.is_set():
                replication.run(topic)

        with ThreadPoolExecutor(THREADS + 1) as pool:
            replicating = pool.submit(replicate)
            clients = [pool.submit(client, n) for n in range(THREADS)]
            for _ in range(THREADS * ATTEMPTS // 3):  # a third of the appends answered
                answered.acquire()
            restartable_reader.restart()
            try:
                for future in clients:
                    future.result()
            finally:
                done.set()
            replicating.result()

        assert unexpected == []
        assert restartable_reader.restarted.is_set()
        with httpx.Client(timeout=60) as http:
            for replicated in (False, True):
                if replicated:
                    replication.run(topic)
                for id, winners in won.items():
                    n = c.pointer(http, restartable_reader.url, topic, id)
                    assert sorted(winners) == list(range(1, n + 1)), (id, sorted(winners), n)
                    expected = [(seq_nr, winners[seq_nr]) for seq_nr in sorted(winners)]
                    assert c.events(http, restartable_reader.url, topic, id) == expected
                    status = c.status(http, restartable_reader.url, topic, id)
                    assert status is not None
                    assert status["conflicts"] == []

    counts = ", ".join(f"{label}: {count}" for label, count in sorted(statuses.items()))
    add_session_report(
        request.config,
        "reader restarted under appends (issue 40)",
        f"{THREADS} threads × {ATTEMPTS} conditional appends on {JOURNALS} journals, the reader "
        f"restarted after a third: answers {counts}; 504s resent: {resent}; final seqNrs "
        f"{[len(w) for w in won.values()]}; events and pointers the winners', before and after "
        "replication; conflicts: none",
    )
