"""A journal far larger than the reader's memory bound streams through it, with back-pressure.

100 000 events of ~1.5 KiB (about 170 MB of NDJSON) are appended, then read through a reader whose
payload budgets are small. The reader's resident memory may grow by at most MEMORY_BOUND, both
while a slow client holds the stream paused and over the whole read (peak RSS, VmHWM). No
replicator runs, so every event comes from the Kafka tail.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import httpx
import pytest
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services.conftest import reader_settings
from tests.integration.services.support import start_service

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(900)]

EVENTS = 100_000
BATCH = 500
PAYLOAD_BYTES = 1536
MEMORY_BOUND = 48 * 1024 * 1024


async def _append_journal(bootstrap: str, key: Key) -> None:
    async with Journals(KafkaSettings(bootstrap_servers=bootstrap, linger_ms=5)) as journals:
        journal = journals.journal(key)
        for first in range(1, EVENTS + 1, BATCH):  # one at a time: appends must stay in order
            events = [
                Event(SeqNr(n), payload=TextPayload(os.urandom(PAYLOAD_BYTES // 2).hex()))
                for n in range(first, first + BATCH)
            ]
            await journal.produce(events)


def test_a_huge_journal_streams_in_bounded_memory(
    platform: Endpoints, services_keyspace: str, topic: str, tmp_path: Path
):
    key = Key(topic, "huge")
    started = time.perf_counter()
    asyncio.run(_append_journal(platform.kafka_bootstrap, key))
    appended_s = time.perf_counter() - started

    reader = start_service(
        "kjournal_reader",
        {
            **reader_settings(platform, services_keyspace),
            "KJOURNAL_FOLD__PAYLOAD_BUDGET_BYTES": str(2 * 1024 * 1024),
            "KJOURNAL_CONSUMER_POOL__SCAN_PAYLOAD_BUDGET_BYTES": str(2 * 1024 * 1024),
        },
        tmp_path,
        ready_path="/readyz",
    )
    try:
        url = f"{reader.url}/v1/journals/{topic}/huge/events"
        with httpx.Client(timeout=120) as http:
            # Warm up: the tail cache starts tailing the topic, the code paths are loaded.
            assert len(http.get(url, params={"limit": 10}).text.splitlines()) == 10
            baseline = reader.status_kib("VmRSS") * 1024

            received = 0
            expected = 1
            with http.stream("GET", url) as response:
                assert response.status_code == 200
                lines = response.iter_lines()
                for line in lines:  # a little, then pause: the server must wait for us
                    received += len(line) + 1
                    assert json.loads(line)["seqNr"] == expected
                    expected += 1
                    if received > 1024 * 1024:
                        break
                time.sleep(5)
                paused_growth = reader.status_kib("VmRSS") * 1024 - baseline
                for line in lines:
                    received += len(line) + 1
                    assert json.loads(line).get("seqNr") == expected, line[:1500]
                    expected += 1
            peak_growth = reader.status_kib("VmHWM") * 1024 - baseline
    finally:
        assert reader.stop(), reader.log()

    assert expected - 1 == EVENTS
    assert received > 3 * MEMORY_BOUND  # the journal is much larger than the bound
    sys.stderr.write(
        f"\n{EVENTS} events, {received / 1e6:.0f} MB of NDJSON (appended in {appended_s:.1f} s); "
        f"reader RSS growth: {paused_growth / 1e6:.1f} MB paused, {peak_growth / 1e6:.1f} MB peak "
        f"(bound {MEMORY_BOUND / 1e6:.0f} MB)\n"
    )
    assert paused_growth < MEMORY_BOUND
    assert peak_growth < MEMORY_BOUND
