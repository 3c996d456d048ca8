"""Graceful shutdown: on SIGTERM the writer finishes in-flight appends, then exits.

The writer's producer lingers 3 s before sending, so appends are still in flight when the
signal arrives; each must still be answered 201 and be in Kafka.
"""

from __future__ import annotations

import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services.conftest import kafka_settings
from tests.integration.services.conftest import reader_link
from tests.integration.services.support import RunningService
from tests.integration.services.support import end_offsets
from tests.integration.services.support import start_service

pytestmark = [pytest.mark.kafka]

APPENDS = 16


def _wait_until_in_flight(url: str, count: int, timeout_s: float = 20.0) -> None:
    """Until the writer is handling `count` requests (besides the /metrics one asking)."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = httpx.get(url + "/metrics", timeout=5).text
        line = next(
            row for row in text.splitlines() if row.startswith("kjournal_http_requests_in_flight")
        )
        if float(line.split()[-1]) >= count + 1:
            return
        assert time.monotonic() < deadline, line
        time.sleep(0.05)


def test_in_flight_appends_finish_before_the_writer_exits(
    platform: Endpoints, reader: RunningService, topic: str, tmp_path: Path
):
    writer = start_service(
        "kjournal_writer",
        {**kafka_settings(platform), **reader_link(reader), "KJOURNAL_KAFKA__LINGER_MS": "3000"},
        tmp_path,
        ready_path="/readyz",
    )

    def append(n: int) -> int:
        body = {"events": [{"seqNr": 1, "payload": {"n": n}}]}
        url = f"{writer.url}/v1/journals/{topic}/journal-{n}/events"
        return httpx.post(url, json=body, timeout=30).status_code

    with ThreadPoolExecutor(APPENDS) as pool:
        started = time.monotonic()
        answers = [pool.submit(append, n) for n in range(APPENDS)]
        _wait_until_in_flight(writer.url, APPENDS)
        assert not any(answer.done() for answer in answers)
        writer.process.send_signal(signal.SIGTERM)
        statuses = [answer.result() for answer in answers]
        elapsed = time.monotonic() - started

    assert statuses == [201] * APPENDS
    assert elapsed >= 1.5
    assert writer.process.wait(30) in (0, -signal.SIGTERM)
    log = writer.log()
    assert log.index("Shutting down") < log.index("Application shutdown complete")
    assert sum(end_offsets(platform.kafka_bootstrap, topic).values()) == APPENDS
