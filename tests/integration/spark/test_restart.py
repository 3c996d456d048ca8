"""Crashes, restarts and lost offsets: each test runs `python -m kjournal_replicator` itself."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import RecordsToDelete
from kjournal.journal import Journals
from kjournal.model import Key

from tests.integration.spark.model import append
from tests.integration.spark.model import random_workload
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import SparkTopic
from tests.integration.spark.support import replicator_run
from tests.integration.spark.support import wait_until

pytestmark = pytest.mark.timeout(900)

CATCH_UP_S = 300


def test_sigkill_mid_batch_then_restart_with_and_without_checkpoint(
    new_topic: Callable[[], SparkTopic], tmp_path: Path
) -> None:
    topic = new_topic()
    ids = [f"journal-{i}" for i in range(40)]

    def write(seed: int, actions: int) -> None:
        topic.write(lambda j: random_workload(j, topic.model, ids, actions=actions, seed=seed))

    write(seed=1, actions=30)
    checkpoint = tmp_path / "checkpoint"
    # Small micro-batches, so that the kill lands while one is being applied.
    env = topic.env(
        checkpoint,
        KJOURNAL_SPARK__MAX_OFFSETS_PER_TRIGGER="150",
        KJOURNAL_SPARK__TRIGGER_INTERVAL_S="0",
    )
    check = topic.caught_up()

    with replicator_run(env, tmp_path / "first.log", kill=True) as first:
        wait_until(
            lambda: any(p is not None for p in topic.pointers().values()),
            CATCH_UP_S,
            "the first micro-batch",
            first,
        )
    assert not check(), "everything was replicated before the kill: nothing left to test"

    # Restart from the checkpoint: the killed batch is replayed, nothing is applied twice.
    with replicator_run(env, tmp_path / "second.log") as second:
        wait_until(check, CATCH_UP_S, "catching up after the kill", second)
        assert topic.stored(ids) == topic.model.expected()
    assert "stopped after micro-batch" in second.output()

    # Without the checkpoint the job starts right after pointer2.
    shutil.rmtree(checkpoint)
    write(seed=2, actions=10)
    expected_start = {
        topic.name: {
            str(p): -2 if offset is None else offset + 1 for p, offset in topic.pointers().items()
        }
    }
    with replicator_run(env, tmp_path / "third.log") as third:
        wait_until(check, CATCH_UP_S, "catching up without a checkpoint", third)
        assert topic.stored(ids) == topic.model.expected()
    assert json.dumps(json.dumps(expected_start, sort_keys=True))[1:-1] in third.output()


async def _delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_records(
            {TopicPartition(topic, partition): RecordsToDelete(before)}, timeout_ms=10_000
        )
    finally:
        await admin.close()


def _write_lost(topic: SparkTopic, appends: int) -> int:
    """`appends` appends of one event each to the journal "lost", then a mark; returns its
    partition."""

    async def write(journals: Journals) -> int:
        for _ in range(appends):
            await append(journals, topic.model, "lost", 1)
        return (await journals.journal(Key(topic.name, "lost")).mark()).partition

    return topic.write(write)


def _run_to_failure(env: dict[str, str], log: Path) -> ReplicatorProcess:
    process = ReplicatorProcess(env, log)
    try:
        process.process.wait(240)
    finally:
        process.kill()
    return process


def test_offsets_lost_to_retention_fail_the_query(
    new_topic: Callable[[], SparkTopic], tmp_path: Path
) -> None:
    topic = new_topic()
    partition = _write_lost(topic, appends=12)
    # Cassandra holds offsets up to 2; retention then deletes everything below 10.
    store = topic.store()
    store.set_pointer2(topic.name, partition, 2, datetime.now(UTC), insert=True)
    asyncio.run(_delete_records(topic.bootstrap, topic.name, partition, 10))

    process = _run_to_failure(topic.env(tmp_path / "checkpoint"), tmp_path / "replicator.log")
    assert process.process.returncode == 1, process.output()[-4000:]
    assert "the replication query failed" in process.output()
    assert "Some data may have been lost because they are not available in Kafka any more" in (
        process.output()
    )
    assert "offsets 3..9 are no longer in Kafka" in process.output()
    assert store.pointer2(topic.name, partition) == 2


def test_offsets_never_replicated_are_not_skipped(
    new_topic: Callable[[], SparkTopic], tmp_path: Path
) -> None:
    topic = new_topic()
    partition = _write_lost(topic, appends=8)
    # No pointer2 at all, and retention already deleted offsets 0..4.
    asyncio.run(_delete_records(topic.bootstrap, topic.name, partition, 5))

    process = _run_to_failure(topic.env(tmp_path / "checkpoint"), tmp_path / "replicator.log")
    assert process.process.returncode == 1, process.output()[-4000:]
    assert f"{topic.name}:{partition}: offsets 0..4 are no longer in Kafka" in process.output()
    assert topic.store().pointer2(topic.name, partition) is None


def test_a_checkpoint_ahead_of_cassandra_is_caught_up_from_kafka(
    new_topic: Callable[[], SparkTopic], tmp_path: Path
) -> None:
    """Cassandra lost its last writes (or was restored from an older backup) while the Spark
    checkpoint kept its place: pointer2 is behind the checkpoint. The records in between are
    still in Kafka: the replicator reads them again instead of refusing or skipping them."""
    topic = new_topic()
    partition = _write_lost(topic, 6)  # offsets 0..6
    env = topic.env(tmp_path / "checkpoint")
    store = topic.store()

    with replicator_run(env, tmp_path / "first.log") as first:
        topic.wait_caught_up(CATCH_UP_S, "replication of the first appends", first)
    assert store.pointer2(topic.name, partition) == 6

    store.set_pointer2(topic.name, partition, 2, datetime.now(UTC), insert=False)  # forgot 3..6
    _write_lost(topic, 2)  # offsets 7..9, where the checkpoint resumes

    with replicator_run(env, tmp_path / "second.log") as second:
        topic.wait_caught_up(CATCH_UP_S, "replication after pointer2 went back", second)
    # Which path brought 3..6 back depends on where the first replicator stopped: with its last
    # micro-batch committed the checkpoint resumes at 7 and the gap (3..6) is read from Kafka
    # again; with it uncommitted Spark runs that batch (from 3) again. Either way nothing is
    # refused or skipped, which is what the rest of this test checks.
    gap_read_again = (
        f"{topic.name}:{partition} offsets 3..6 (pointer2 2, the micro-batch starts at 7)"
    )
    assert gap_read_again in second.output() or "micro-batch 0: 1 partitions, 4 records" in (
        second.output()
    ), second.output()[-3000:]
    assert "refusing" not in second.output()
    assert store.pointer2(topic.name, partition) == 9
    assert topic.stored(["lost"])["lost"] == topic.model.journal("lost").events
