"""Following a topic with the clients and the CLI (docs/feed.md): a follower resumes after the
last item it got across a reader killed and restarted, with no gap and no repeat; `kjournal
follow` prints what comes and, on Ctrl-C, the cursor to resume from."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from contextlib import aclosing
from pathlib import Path

import httpx
import pytest
from kjournal.api.feed_items import FeedItem
from kjournal.client import AsyncClient
from kjournal.client import Client
from kjournal.client import RetryPolicy
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services import concurrency as c
from tests.integration.services.conftest import reader_settings
from tests.integration.services.support import RunningService
from tests.integration.services.support import start_service
from tests.integration.services.test_topic_feed import body

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(300)]


def _events(items: list[FeedItem]) -> list[tuple[str | None, int]]:
    return [(i.id, i.record.seq_nr) for i in items if i.record is not None]


def test_follow_resumes_across_a_reader_killed_and_restarted(
    writer: RunningService,
    topic: str,
    platform: Endpoints,
    services_keyspace: str,
    service_logs: Path,
) -> None:
    settings = reader_settings(platform, services_keyspace)
    reader = start_service("kjournal_reader", settings, service_logs, ready_path="/readyz")
    port = int(reader.url.rsplit(":", 1)[1])
    with httpx.Client(timeout=60) as http:
        assert c.append(http, writer.url, topic, "f", body(1, 3, "before")).status == 201
    client = Client(reader_url=reader.url, retry=RetryPolicy(budget_s=120), timeout=30)
    items = client.follow(topic, heartbeat_s=0.5)
    got: list[FeedItem] = []
    try:
        while len(_events(got)) < 2:  # stopped inside the append of seqNrs 1 to 3
            got.append(next(items))
        reader.process.kill()
        reader.process.wait(30)
        with httpx.Client(timeout=60) as http:
            assert c.append(http, writer.url, topic, "f", body(4, 5, "meanwhile")).status == 201
        reader = start_service(
            "kjournal_reader", settings, service_logs, ready_path="/readyz", port=port
        )
        while len(_events(got)) < 5:
            got.append(next(items))
    finally:
        items.close()
        client.close()
        assert reader.stop(), reader.log()
    assert _events(got) == [("f", n) for n in range(1, 6)]


def test_async_follow_filters_by_tag(
    writer: RunningService, reader: RunningService, topic: str
) -> None:
    with httpx.Client(timeout=60) as http:
        assert c.append(http, writer.url, topic, "a", body(1, 2, "x", ("blue",))).status == 201
        assert c.append(http, writer.url, topic, "b", body(1, 1, "y", ("red",))).status == 201

    async def follow() -> list[FeedItem]:
        async with AsyncClient(reader_url=reader.url, timeout=30) as client:
            got: list[FeedItem] = []
            async with aclosing(client.follow(topic, tags=["red"], heartbeat_s=0.5)) as items:
                async for item in items:
                    got.append(item)
                    if item.type == "heartbeat" and _events(got):
                        return got
            return got

    assert _events(asyncio.run(follow())) == [("b", 1)]


def test_a_catch_up_ends_with_the_cursor_a_later_one_resumes_from(
    writer: RunningService, reader: RunningService, topic: str
) -> None:
    with httpx.Client(timeout=60) as http:
        assert c.append(http, writer.url, topic, "a", body(1, 2, "x", ("blue",))).status == 201
    with Client(reader_url=reader.url, timeout=30) as client:
        first = list(client.feed(topic))
        assert _events(first) == [("a", 1), ("a", 2)]
        assert first[-1].type == "end"
        assert _events(list(client.feed(topic, tags=["red"]))) == []
        with httpx.Client(timeout=60) as http:
            assert c.append(http, writer.url, topic, "b", body(1, 1, "y", ("red",))).status == 201
        later = list(client.feed(topic, first[-1].cursor))
        assert _events(later) == [("b", 1)]
        assert [item.type for item in client.feed(topic, from_end=True)] == ["end"]

    async def from_inside_the_append() -> list[FeedItem]:
        async with (
            AsyncClient(reader_url=reader.url, timeout=30) as client,
            aclosing(client.feed(topic, first[0].cursor)) as items,
        ):
            return [item async for item in items]

    assert _events(asyncio.run(from_inside_the_append())) == [("a", 2), ("b", 1)]


def test_kjournal_follow_prints_and_gives_the_cursor_on_ctrl_c(
    writer: RunningService, reader: RunningService, topic: str
) -> None:
    env = {**os.environ, "KJOURNAL_WRITER_URL": writer.url, "KJOURNAL_READER_URL": reader.url}
    base = [sys.executable, "-m", "kjournal.cli"]
    subprocess.run(
        [*base, "append", topic, "k", "1", "2"], env=env, check=True, capture_output=True
    )

    def follow(*args: str) -> tuple[list[str], str]:
        with subprocess.Popen(
            [*base, "follow", topic, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            try:
                assert process.stdout is not None
                lines = [process.stdout.readline().split() for _ in range(2)]
            finally:
                process.send_signal(signal.SIGINT)
                try:
                    code = process.wait(60)  # the next heartbeat (1 s) sees the Ctrl-C
                finally:
                    process.kill()
            assert code == 0
            assert process.stderr is not None
            return [f"{line[0]}:{line[1]}" for line in lines], process.stderr.read()

    lines, err = follow()
    assert lines == ["k:1", "k:2"]
    cursor = err.split("resume with: --after ")[1].split()[0]
    subprocess.run(
        [*base, "append", topic, "k", "3", "4"], env=env, check=True, capture_output=True
    )
    lines, _ = follow("--after", cursor)
    assert lines == ["k:3", "k:4"]
