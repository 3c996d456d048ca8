"""End to end on one running replicator: Journal API → Kafka → Spark (local[2]) → Cassandra.

One `python -m kjournal_replicator` serves the whole module; its topic pattern matches every
topic the tests create later (Spark discovers them and starts them at their earliest offset).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime

import pytest
from aiokafka import AIOKafkaProducer
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.settings import TableNames
from kjournal.journal import Journals
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model import RecordMetadata
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.spark.model import append
from tests.integration.spark.model import events
from tests.integration.spark.model import random_workload
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import SparkTopic
from tests.integration.spark.support import replicator_env
from tests.integration.spark.support import running_replicator
from tests.integration.spark.support import wait_until

pytestmark = pytest.mark.timeout(600)

CATCH_UP_S = 240


@pytest.fixture(scope="module")
def replicator(
    platform: Endpoints,
    module_keyspace: str,
    topic_pattern: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ReplicatorProcess]:
    folder = tmp_path_factory.mktemp("replicator")
    env = replicator_env(platform, module_keyspace, topic_pattern, folder / "checkpoint")
    with running_replicator(env, folder / "replicator.log", 180) as process:
        yield process


def test_replicates_appends_deletes_and_purges(
    replicator: ReplicatorProcess, new_topic: Callable[[], SparkTopic]
) -> None:
    topic = new_topic()
    ids = [f"journal-{i}" for i in range(24)]
    topic.write(lambda journals: random_workload(journals, topic.model, ids, actions=12, seed=1))
    topic.wait_caught_up(CATCH_UP_S, "replication", replicator)
    assert topic.stored(ids) == topic.model.expected()


async def _produce_raw(
    bootstrap: str, topic: str, key: bytes, value: bytes | None, headers: list[tuple[str, bytes]]
) -> int:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        sent = await producer.send_and_wait(
            topic,
            key=key,
            value=value,
            headers=headers,
            timestamp_ms=int(time.time() * 1000),
        )
    finally:
        await producer.stop()
    return int(sent.offset)


def test_poison_records_are_quarantined_and_the_rest_replicates(
    replicator: ReplicatorProcess, new_topic: Callable[[], SparkTopic]
) -> None:
    topic = new_topic()
    model, bootstrap = topic.model, topic.bootstrap
    good = [f"good-{i}" for i in range(8)]
    poisoned: dict[str, int] = {}

    async def write(journals: Journals) -> None:
        for id in good:
            await append(journals, model, id, 2)
        # A journal with an unreadable header: its first append replicates, later ones park.
        await append(journals, model, "bad-header", 1)
        poisoned["bad-header"] = await _produce_raw(
            bootstrap, topic.name, b"bad-header", None, [("journal.action", b"{not json")]
        )
        await journals.journal(Key(topic.name, "bad-header")).produce(events("bad-header", 2, 1))
        # A journal whose append header is fine but whose payload is not a container.
        parts = encode_action(
            append_action(
                Key(topic.name, "bad-payload"),
                datetime.now(UTC),
                Events(tuple(events("bad-payload", 1, 1))),
                RecordMetadata(),
                None,
            )
        )
        poisoned["bad-payload"] = await _produce_raw(
            bootstrap, topic.name, parts.key, b"\x00 not a container", parts.headers
        )
        for id in good:
            await append(journals, model, id, 1)

    topic.write(write)
    topic.wait_caught_up(CATCH_UP_S, "replication past the poison records", replicator)

    stored = topic.stored([*good, "bad-header"])
    assert {id: stored[id] for id in good} == {id: model.expected()[id] for id in good}
    assert stored["bad-header"] == events("bad-header", 1, 1)

    async def quarantined() -> dict[str, int | None]:
        tables = TableNames(keyspace=topic.keyspace)
        reader = await CassandraEventualReader.create(topic.session, tables)
        found = {}
        for id in poisoned:
            record = await reader.quarantined(Key(topic.name, id))
            found[id] = None if record is None else record.offset
        return found

    assert asyncio.run(quarantined()) == poisoned

    def poison_counted() -> bool:
        # The driver replays the executors' metrics after the tasks wrote pointer2: poll.
        status, metrics = replicator.get("/metrics")
        pattern = rf'kjournal_replicator_quarantined_records_total\{{kind="poison",topic="{topic.name}"\}} 2\.0'
        return status == 200 and re.search(pattern, metrics) is not None

    wait_until(poison_counted, 30, "the poison records counted", replicator)


def test_a_batch_of_marks_only_advances_pointer2(
    replicator: ReplicatorProcess, new_topic: Callable[[], SparkTopic]
) -> None:
    topic = new_topic()
    topic.append(["marked"], 3)
    topic.wait_caught_up(CATCH_UP_S, "the append", replicator)
    before = topic.pointers()

    async def write_marks(journals: Journals) -> list[int]:
        journal = journals.journal(Key(topic.name, "marked"))
        return [(await journal.mark()).offset for _ in range(3)]

    marks = topic.write(write_marks)
    topic.wait_caught_up(CATCH_UP_S, "the marks", replicator)
    after = topic.pointers()
    moved = {p: offset for p, offset in after.items() if offset != before[p]}
    assert list(moved.values()) == [marks[-1]]
    assert topic.stored(["marked"]) == topic.model.expected()


def test_health_and_metrics_endpoint(
    replicator: ReplicatorProcess, new_topic: Callable[[], SparkTopic]
) -> None:
    topic = new_topic()
    topic.append([f"m-{i}" for i in range(8)], 2)
    topic.wait_caught_up(CATCH_UP_S, "replication", replicator)

    def lag_reported() -> bool:
        body = replicator.get("/metrics")[1]
        lags = re.findall(
            rf'kjournal_replication_lag_records\{{partition="\d",topic="{topic.name}"\}} (\S+)',
            body,
        )
        return len(lags) == 4 and all(float(lag) == 0 for lag in lags)

    wait_until(lag_reported, 30, "lag 0 on every partition", replicator)
    status, body = replicator.get("/metrics")
    assert status == 200
    assert re.search(
        rf'kjournal_replicator_latency_seconds_count\{{topic="{topic.name}"\}} 8\.0', body
    )
    assert re.search(rf'kjournal_replicator_events_total\{{topic="{topic.name}"\}} 16\.0', body)
    assert 'kjournal_replicator_micro_batches_total{result="applied"}' in body
    status, health = replicator.get("/healthz")
    assert status == 200
    assert '"ok": true' in health
    assert "micro-batch" in replicator.output()
