"""A writer, a reader and a replicator of one fresh topic and keyspace, tracing to the platform's
OpenTelemetry Collector (tests/support/platform.py points every process the tests start at it),
and the spans the collector wrote."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassandra.cluster import Session
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics
from kjournal_dev.traces.waterfall import Span
from kjournal_dev.traces.waterfall import read_spans

from tests.integration.services.support import RunningService
from tests.integration.services.support import start_service
from tests.integration.services.support import wait_for_topic
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import replicator_env
from tests.integration.spark.support import running_replicator
from tests.support.platform import cassandra_env
from tests.support.platform import kafka_env
from tests.support.platform import schema_keyspace
from tests.support.platform import unique_name

SPANS_WAIT_S = 90


@pytest.fixture(scope="module")
def spans_dir(platform: Endpoints) -> Path:
    if platform.spans_dir is None:
        pytest.fail(
            "the platform runs no OpenTelemetry Collector (KJOURNAL_DEV_COLLECTOR=false?): "
            "these tests read the spans it writes"
        )
    return platform.spans_dir


@pytest.fixture(scope="module")
def traced_keyspace(session: Session) -> Iterator[str]:
    with schema_keyspace(session, "kjtrace") as name:
        yield name


@pytest.fixture(scope="module")
def topics(kafka_bootstrap: str) -> Iterator[tuple[str, str]]:
    """(replicated, not replicated): two fresh 4-partition journal topics."""
    names = (unique_name("journal_trace"), unique_name("journal_tail"))
    for name in names:
        asyncio.run(create_topic(kafka_bootstrap, name, 4))
        wait_for_topic(kafka_bootstrap, name)
    yield names
    asyncio.run(delete_topics(kafka_bootstrap, list(names)))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("traced-services")


@pytest.fixture(scope="module")
def writer(platform: Endpoints, reader: RunningService, logs: Path) -> Iterator[RunningService]:
    service = start_service(
        "kjournal_writer",
        {**kafka_env(platform), "KJOURNAL_READER__URL": reader.url},
        logs,
        ready_path="/readyz",
    )
    yield service
    service.stop()


@pytest.fixture(scope="module")
def reader(platform: Endpoints, traced_keyspace: str, logs: Path) -> Iterator[RunningService]:
    service = start_service(
        "kjournal_reader",
        {**kafka_env(platform), **cassandra_env(platform, traced_keyspace)},
        logs,
        ready_path="/readyz",
    )
    yield service
    service.stop()


@pytest.fixture(scope="module")
def replicator(
    platform: Endpoints, traced_keyspace: str, topics: tuple[str, str], logs: Path
) -> Iterator[ReplicatorProcess]:
    env = replicator_env(platform, traced_keyspace, re.escape(topics[0]), logs / "checkpoint")
    with running_replicator(env, logs / "replicator.log", 240) as process:
        yield process


class CollectedSpans:
    """What the collector wrote, read again until a condition holds."""

    def __init__(self, spans_dir: Path) -> None:
        self.spans_dir = spans_dir

    def wait_for(
        self, what: str, found: Callable[[list[Span]], bool], mentioning: str
    ) -> list[Span]:
        deadline = time.monotonic() + SPANS_WAIT_S
        while True:
            spans = read_spans(self.spans_dir, mentioning=mentioning)
            if found(spans):
                return spans
            if time.monotonic() > deadline:
                names = sorted({(s.service, s.name, s.trace_id) for s in spans})
                raise AssertionError(
                    f"no {what} in {self.spans_dir} after {SPANS_WAIT_S} s: {names}"
                )
            time.sleep(0.5)


@pytest.fixture(scope="module")
def collected(spans_dir: Path) -> CollectedSpans:
    return CollectedSpans(spans_dir)
