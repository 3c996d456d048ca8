"""Crashes, restarts and lost offsets: each test runs `python -m kjournal_replicator` itself."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, RecordsToDelete
from cassandra.cluster import Session
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.model import Key
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.spark.model import Model, append, random_workload
from tests.integration.spark.support import (
    ReplicatorProcess,
    caught_up,
    journals_at,
    pointers,
    replicator_env,
    stored_events,
    wait_until,
)

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(900)]

CATCH_UP_S = 300


def test_sigkill_mid_batch_then_restart_with_and_without_checkpoint(
    platform: Endpoints,
    new_topic,
    module_keyspace: str,
    session: Session,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    topic = new_topic()
    model = Model(topic)
    ids = [f"journal-{i}" for i in range(40)]

    async def write(seed: int, actions: int) -> None:
        async with journals_at(kafka_bootstrap) as journals:
            await random_workload(journals, model, ids, actions=actions, seed=seed)

    asyncio.run(write(seed=1, actions=30))
    checkpoint = tmp_path / "checkpoint"
    # Small micro-batches, so that the kill lands while one is being applied.
    env = replicator_env(
        platform,
        module_keyspace,
        re.escape(topic),
        checkpoint,
        KJOURNAL_SPARK__MAX_OFFSETS_PER_TRIGGER="150",
        KJOURNAL_SPARK__TRIGGER_INTERVAL_S="0",
    )
    check = caught_up(kafka_bootstrap, session, module_keyspace, topic)

    first = ReplicatorProcess(env, tmp_path / "first.log")
    try:
        wait_until(
            lambda: any(p is not None for p in pointers(session, module_keyspace, topic).values()),
            CATCH_UP_S,
            "the first micro-batch",
            first,
        )
    finally:
        first.kill()
    assert not check(), "everything was replicated before the kill: nothing left to test"

    # Restart from the checkpoint: the killed batch is replayed, nothing is applied twice.
    second = ReplicatorProcess(env, tmp_path / "second.log")
    try:
        wait_until(check, CATCH_UP_S, "catching up after the kill", second)
        assert asyncio.run(stored_events(session, module_keyspace, topic, ids)) == (
            model.expected()
        )
        assert second.terminate() == 0
    finally:
        second.kill()
    assert "stopped after micro-batch" in second.output()

    # Without the checkpoint the job starts right after pointer2.
    shutil.rmtree(checkpoint)
    asyncio.run(write(seed=2, actions=10))
    expected_start = {
        topic: {
            str(p): -2 if offset is None else offset + 1
            for p, offset in pointers(session, module_keyspace, topic).items()
        }
    }
    third = ReplicatorProcess(env, tmp_path / "third.log")
    try:
        wait_until(check, CATCH_UP_S, "catching up without a checkpoint", third)
        assert asyncio.run(stored_events(session, module_keyspace, topic, ids)) == (
            model.expected()
        )
        assert third.terminate() == 0
    finally:
        third.kill()
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


def _write_one_journal(bootstrap: str, topic: str, appends: int) -> int:
    """Appends to one journal; returns its partition."""
    model = Model(topic)

    async def write() -> int:
        async with journals_at(bootstrap) as journals:
            for _ in range(appends):
                await append(journals, model, "lost", 1)
            result = await journals.journal(model_key(topic)).mark()
            return result.partition

    return asyncio.run(write())


def model_key(topic: str):

    return Key(topic, "lost")


def _run_to_failure(env: dict[str, str], log: Path) -> ReplicatorProcess:
    process = ReplicatorProcess(env, log)
    try:
        process.process.wait(240)
    finally:
        process.kill()
    return process


def test_offsets_lost_to_retention_fail_the_query(
    platform: Endpoints,
    new_topic,
    module_keyspace: str,
    session: Session,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    topic = new_topic()
    partition = _write_one_journal(kafka_bootstrap, topic, appends=12)
    # Cassandra holds offsets up to 2; retention then deletes everything below 10.
    store = CassandraReplicatedStore(session, TableNames(keyspace=module_keyspace))
    store.set_pointer2(topic, partition, 2, datetime.now(UTC), insert=True)
    asyncio.run(_delete_records(kafka_bootstrap, topic, partition, 10))

    env = replicator_env(platform, module_keyspace, re.escape(topic), tmp_path / "checkpoint")
    process = _run_to_failure(env, tmp_path / "replicator.log")
    assert process.process.returncode == 1, process.output()[-4000:]
    assert "the replication query failed" in process.output()
    assert "Some data may have been lost because they are not available in Kafka any more" in (
        process.output()
    )
    assert "offsets 3..9 are no longer in Kafka" in process.output()
    assert store.pointer2(topic, partition) == 2


def test_offsets_never_replicated_are_not_skipped(
    platform: Endpoints,
    new_topic,
    module_keyspace: str,
    session: Session,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    topic = new_topic()
    partition = _write_one_journal(kafka_bootstrap, topic, appends=8)
    # No pointer2 at all, and retention already deleted offsets 0..4.
    asyncio.run(_delete_records(kafka_bootstrap, topic, partition, 5))

    env = replicator_env(platform, module_keyspace, re.escape(topic), tmp_path / "checkpoint")
    process = _run_to_failure(env, tmp_path / "replicator.log")
    assert process.process.returncode == 1, process.output()[-4000:]
    assert f"{topic}:{partition}: offsets 0..4 are no longer in Kafka" in process.output()
    store = CassandraReplicatedStore(session, TableNames(keyspace=module_keyspace))
    assert store.pointer2(topic, partition) is None


def test_a_checkpoint_ahead_of_cassandra_is_caught_up_from_kafka(
    platform: Endpoints,
    new_topic,
    module_keyspace: str,
    session: Session,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    """Cassandra lost its last writes (or was restored from an older backup) while the Spark
    checkpoint kept its place: pointer2 is behind the checkpoint. The records in between are
    still in Kafka: the replicator reads them again instead of refusing or skipping them."""
    topic = new_topic()
    model = Model(topic)

    async def write(appends: int) -> int:
        async with journals_at(kafka_bootstrap) as journals:
            for _ in range(appends):
                await append(journals, model, "lost", 1)
            return (await journals.journal(model_key(topic)).mark()).partition

    partition = asyncio.run(write(6))  # offsets 0..6
    env = replicator_env(platform, module_keyspace, re.escape(topic), tmp_path / "checkpoint")
    check = caught_up(kafka_bootstrap, session, module_keyspace, topic)
    store = CassandraReplicatedStore(session, TableNames(keyspace=module_keyspace))

    first = ReplicatorProcess(env, tmp_path / "first.log")
    try:
        wait_until(check, CATCH_UP_S, "replication of the first appends", first)
        assert first.terminate() == 0
    finally:
        first.kill()
    assert store.pointer2(topic, partition) == 6

    store.set_pointer2(topic, partition, 2, datetime.now(UTC), insert=False)  # forgot 3..6
    asyncio.run(write(2))  # offsets 7..9, where the checkpoint resumes

    second = ReplicatorProcess(env, tmp_path / "second.log")
    try:
        wait_until(check, CATCH_UP_S, "replication after pointer2 went back", second)
        assert second.terminate() == 0
    finally:
        second.kill()
    # Which path brought 3..6 back depends on where the first replicator stopped: with its last
    # micro-batch committed the checkpoint resumes at 7 and the gap (3..6) is read from Kafka
    # again; with it uncommitted Spark runs that batch (from 3) again. Either way nothing is
    # refused or skipped, which is what the rest of this test checks.
    gap_read_again = f"{topic}:{partition} offsets 3..6 (pointer2 2, the micro-batch starts at 7)"
    assert gap_read_again in second.output() or "micro-batch 0: 1 partitions, 4 records" in (
        second.output()
    ), second.output()[-3000:]
    assert "refusing" not in second.output()
    assert store.pointer2(topic, partition) == 9
    stored = asyncio.run(stored_events(session, module_keyspace, topic, ["lost"]))
    assert stored["lost"] == model.journal("lost").events
