"""Expiry on the real platform: journals whose expire_on date has come are purged through Kafka
by the expiry job and read 404 once the running replicator applied the purge; one appended to
again, and one without expiry, are left alone; a head a Scala replicator left in the old
100-bucket layout is found and purged too; a second run purges nothing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.segments import OLD_METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.fold.plan import InsertRows
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import ExpireAfter
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.wire.partitioner import partition_for
from kjournal_replicator.expiry.__main__ import main as expiry_main

from tests.integration.spark.support import PARTITIONS
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import caught_up
from tests.integration.spark.support import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(600)]

SECOND = RecordMetadata(payload=PayloadMetadata(expire_after=ExpireAfter.of(1, "second")))
DAYS = RecordMetadata(payload=PayloadMetadata(expire_after=ExpireAfter.of(3, "days")))


def _events(first: int, count: int) -> list[Event]:
    return [Event(SeqNr(n), payload=JsonPayload({"n": n})) for n in range(first, first + count)]


async def _reads(
    bootstrap: str, session: Session, keyspace: str, keys: list[Key]
) -> dict[str, list[int] | None]:
    """Each journal's seqNrs as a read returns them; None: no such journal (HTTP 404)."""
    reader = await CassandraEventualReader.create(session, TableNames(keyspace=keyspace))
    found: dict[str, list[int] | None] = {}
    async with Journals(
        KafkaSettings(bootstrap_servers=bootstrap), eventual=reader, writes=False
    ) as journals:
        for key in keys:
            journal = journals.journal(key)
            if await journal.pointer() is None:
                found[key.id] = None
            else:
                found[key.id] = [record.seq_nr async for record in journal.read()]
    return found


def _id_in_partition(partition: int) -> str:
    return next(
        id
        for id in (f"neighbour-{n}" for n in range(1000))
        if partition_for(id.encode(), PARTITIONS) == partition
    )


def _seed_scala_head(session: Session, keyspace: str, key: Key, expire_on: date) -> None:
    """A head and its rows as kafka-journal's replicator leaves them in the old bucket layout."""
    record_id = uuid.uuid4()
    partition = partition_for(key.id.encode(), PARTITIONS)
    bucket = metajournal_bucket(key.id, OLD_METAJOURNAL_BUCKETS)
    now = datetime.now(UTC)
    session.execute(
        f"INSERT INTO {keyspace}.metajournal (topic, segment, id, partition, offset, segment_size, "
        "seq_nr, expire_after, expire_on, record_id, created, created_date, updated) "
        "VALUES (%s, %s, %s, %s, 0, 10000, 2, 1d, %s, %s, %s, %s, %s)",
        (key.topic, bucket, key.id, partition, expire_on, record_id, now, now.date(), now),
    )
    rows = tuple(
        EventRecord(event, now.replace(microsecond=0), PartitionOffset(partition, 0))
        for event in _events(1, 2)
    )
    store = CassandraReplicatedStore(session, TableNames(keyspace=keyspace))
    assert store.write([(key, [(InsertRows(0, rows, record_id),)])]) == [None]


def _expire_on(session: Session, keyspace: str, key: Key) -> date:
    store = CassandraReplicatedStore(session, TableNames(keyspace=keyspace))
    head = store.heads([key])[0]
    assert head is not None
    assert head.expiry is not None
    return head.expiry.on


def test_expired_journals_are_purged_through_kafka_and_others_are_not(
    replicator: ReplicatorProcess,
    new_topic: Callable[[], str],
    kafka_bootstrap: str,
    session: Session,
    ops_keyspace: str,
    ops_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    topic = new_topic()
    short, renewed, forever, scala = (
        Key(topic, id) for id in ("short", "renewed", "forever", "scala")
    )

    async def write(batches: list[tuple[Key, list[Event], RecordMetadata | None]]) -> None:
        async with Journals(KafkaSettings(bootstrap_servers=kafka_bootstrap)) as journals:
            for key, events, metadata in batches:
                await journals.journal(key).produce(events, metadata)

    # The seeded Scala head says it was replicated from a record of its partition at offset 0: a
    # neighbour's record takes that offset, so the purge comes after it (a head's offset is the
    # last record applied; a record at or below it is not applied again).
    neighbour = Key(topic, _id_in_partition(partition_for(scala.id.encode(), PARTITIONS)))
    asyncio.run(
        write(
            [
                (neighbour, _events(1, 1), None),
                (short, _events(1, 3), SECOND),
                (renewed, _events(1, 2), SECOND),
                (forever, _events(1, 2), None),
            ]
        )
    )
    replicated = caught_up(kafka_bootstrap, session, ops_keyspace, topic)
    wait_until(replicated, 240, "replication", replicator)
    # Appended to again, for three more days: its expire_on moved.
    asyncio.run(write([(renewed, _events(3, 1), DAYS)]))
    wait_until(replicated, 240, "replication", replicator)
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    _seed_scala_head(session, ops_keyspace, scala, yesterday)

    expire_on = _expire_on(session, ops_keyspace, short)
    deadline = time.monotonic() + 5
    while datetime.now(UTC).date() < expire_on:  # replicated just before midnight: tomorrow
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert _expire_on(session, ops_keyspace, renewed) > expire_on

    for name, value in ops_env.items():
        monkeypatch.setenv(name, value)
    metrics = tmp_path / "expiry.prom"
    assert expiry_main([topic, "--metrics-file", str(metrics)]) == 0
    out = capsys.readouterr().out
    assert f"expiry of {topic} as of" in out
    assert "2 expired, 2 purged" in out, out
    assert f'kjournal_expiry_journals_purged_total{{topic="{topic}"}} 2.0' in metrics.read_text()

    wait_until(replicated, 240, "the purges' replication", replicator)
    assert asyncio.run(
        _reads(kafka_bootstrap, session, ops_keyspace, [short, renewed, forever, scala])
    ) == {
        "short": None,
        "renewed": [1, 2, 3],
        "forever": [1, 2],
        "scala": None,
    }
    old_bucket = metajournal_bucket(scala.id, OLD_METAJOURNAL_BUCKETS)
    leftovers = session.execute(
        f"SELECT id FROM {ops_keyspace}.metajournal WHERE topic = %s AND segment = %s",
        (topic, old_bucket),
    ).all()
    assert leftovers == []
    rows = session.execute(
        f"SELECT seq_nr FROM {ops_keyspace}.journal WHERE id = %s AND topic = %s AND segment = 0",
        (scala.id, topic),
    ).all()
    assert rows == []

    assert expiry_main([topic]) == 0  # idempotent: nothing is expired any more
    assert "0 expired, 0 purged" in capsys.readouterr().out
