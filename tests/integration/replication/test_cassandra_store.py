"""The replicator's Cassandra store and the eventual reader, on the real node: the eventual store's
contract (kjournal/testing/eventual_store.py) checked with hand-written CQL, then what only
Cassandra has (the old bucket layout, CQL batches, bounded requests, the driver's thread)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest
from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent
from cassandra.query import BatchStatement
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements.metajournal import journal_head_from_row
from kjournal.cassandra.statements.quarantine import quarantined_record_from_row
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.model import ExpireAfter
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.ports import EventualReader
from kjournal.ports import ReplicatedStore
from kjournal.replicate import ReplicationResult
from kjournal.replicate import replicate_partition
from kjournal.testing.eventual_store import EventualStoreContract
from kjournal.testing.eventual_store import StoredHead
from kjournal.testing.eventual_store import StoredPointer
from kjournal.testing.eventual_store import StoredRow
from kjournal.testing.eventual_store import stored_seq_nrs
from kjournal.testing.eventual_store import the_head
from kjournal.testing.records import KEY
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import at
from kjournal.testing.records import broken
from kjournal.testing.records import delete_record
from kjournal.testing.records import purge_record
from kjournal.wire.record import ConsumedRecord

from tests.integration.replication.conftest import StoreFactory

pytestmark = pytest.mark.cassandra


def replicate(
    store: CassandraReplicatedStore, records: Sequence[ConsumedRecord]
) -> ReplicationResult:
    return replicate_partition(TOPIC, 0, records, store, T0)


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(tzinfo=UTC)


class CassandraBackend:
    """The tables as CQL shows them, written by `CassandraReplicatedStore`."""

    def __init__(self, session: Session, tables: TableNames) -> None:
        self.session = session
        self.tables = tables

    def _q(self, table: str) -> str:
        return self.tables.qualified(table)

    def store(self, segment_size: int = 10_000) -> ReplicatedStore:
        return CassandraReplicatedStore(self.session, self.tables, segment_size=segment_size)

    async def reader(self) -> EventualReader:
        return await CassandraEventualReader.create(self.session, self.tables)

    def rows(self, key: Key) -> list[StoredRow]:
        rows = self.session.execute(
            f"SELECT segment, seq_nr, partition, offset, meta_record_id "
            f"FROM {self._q(self.tables.journal)} WHERE id = %s AND topic = %s ALLOW FILTERING",
            (key.id, key.topic),
        )
        return sorted(
            (
                StoredRow(segment, seq_nr, PartitionOffset(partition, offset), meta_record_id)
                for segment, seq_nr, partition, offset, meta_record_id in rows
            ),
            key=lambda row: row.seq_nr,
        )

    def head(self, key: Key) -> StoredHead | None:
        heads = list(
            self.session.execute(
                f"SELECT segment, partition, offset, segment_size, seq_nr, delete_to, "
                f"expire_after, expire_on, record_id, created, updated, origin, "
                f"WRITETIME(offset) FROM {self._q(self.tables.metajournal)} "
                "WHERE topic = %s AND id = %s ALLOW FILTERING",
                (key.topic, key.id),
            )
        )
        assert len(heads) <= 1
        if not heads:
            return None
        segment, *columns, created, updated, origin, written = heads[0]
        assert segment == metajournal_bucket(key.id)
        created, updated = _utc(created), _utc(updated)
        assert created is not None
        assert updated is not None
        return StoredHead(journal_head_from_row(tuple(columns)), created, updated, origin, written)

    def pointer(self, topic: str, partition: int) -> StoredPointer | None:
        row = self.session.execute(
            f"SELECT offset, created, updated FROM {self._q(self.tables.pointer2)} "
            "WHERE topic = %s AND partition = %s",
            (topic, partition),
        ).one()
        if row is None:
            return None
        offset, created, updated = row
        updated = _utc(updated)
        assert updated is not None
        return StoredPointer(offset, _utc(created), updated)

    def quarantined(self, key: Key) -> list[QuarantinedRecord]:
        rows = self.session.execute(
            f"SELECT topic, id, partition, offset, reason, header, value, record_timestamp, "
            f"quarantined_at FROM {self._q(self.tables.quarantine)} WHERE topic = %s AND id = %s",
            (key.topic, key.id),
        )
        return [quarantined_record_from_row(tuple(row)) for row in rows]

    def seed_head(self, key: Key, head: JournalHead, created: datetime) -> None:
        self.session.execute(
            f"INSERT INTO {self._q(self.tables.metajournal)} (topic, segment, id, partition, "
            "offset, segment_size, seq_nr, delete_to, record_id, created, updated) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                key.topic,
                metajournal_bucket(key.id),
                key.id,
                head.partition_offset.partition,
                head.partition_offset.offset,
                head.segment_size,
                head.seq_nr,
                head.delete_to,
                head.record_id,
                created,
                created,
            ),
        )

    def seed_row(
        self, key: Key, segment: int, seq_nr: int, offset: int = 0, timestamp: datetime = T0
    ) -> None:
        self.session.execute(
            f"INSERT INTO {self._q(self.tables.journal)} "
            "(id, topic, segment, seq_nr, timestamp, partition, offset) "
            "VALUES (%s, %s, %s, %s, %s, 0, %s)",
            (key.id, key.topic, segment, seq_nr, timestamp, offset),
        )


@pytest.fixture
def backend(kj_session: Session, tables: TableNames) -> CassandraBackend:
    return CassandraBackend(kj_session, tables)


class TestCassandraEventualStore(EventualStoreContract):
    """The contract's scenarios, with the `backend` fixture above."""


def test_heads_in_the_old_bucket_layout_are_updated_in_place(
    make_store: StoreFactory,
    backend: CassandraBackend,
    cassandra_session: Session,
    tables: TableNames,
) -> None:
    old = metajournal_bucket(KEY.id, 100)
    assert old != metajournal_bucket(KEY.id)
    cassandra_session.execute(
        f"INSERT INTO {tables.qualified(tables.metajournal)} "
        "(topic, segment, id, partition, offset, segment_size, seq_nr, created, updated) "
        "VALUES (%s, %s, %s, 0, 0, 10000, 1, %s, %s)",
        (TOPIC, old, KEY.id, T0, T0),
    )
    store = make_store()
    assert store.heads([KEY]) == [JournalHead(at(0), 10_000, SeqNr(1))]
    replicate(store, [append_record(1, [2])])

    def heads() -> list[tuple[int, int]]:
        rows = cassandra_session.execute(
            f"SELECT segment, seq_nr FROM {tables.qualified(tables.metajournal)} "
            "WHERE topic = %s AND id = %s ALLOW FILTERING",
            (TOPIC, KEY.id),
        )
        return [(row.segment, row.seq_nr) for row in rows]

    assert heads() == [(old, 2)]
    # Purged and started again in one slice: the new head goes to the current layout, and the
    # delete after it updates it there.
    replicate(store, [purge_record(2), append_record(3, [1, 2]), delete_record(4, 1)])
    assert heads() == [(metajournal_bucket(KEY.id), 2)]
    assert the_head(backend).head.delete_to == 1
    assert stored_seq_nrs(backend) == [2]


def with_big_payload(record: ConsumedRecord, size: int) -> ConsumedRecord:
    assert record.value is not None
    padded = record.value.replace(b'{"n":', f'{{"big":"{"x" * size}","n":'.encode())
    return broken(record, value=padded)


def test_journal_rows_go_in_batches_under_the_fail_threshold(
    make_store: StoreFactory, backend: CassandraBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[Any] = []

    def recording(session: Any, statements: Any, **kwargs: Any) -> Any:
        def tap() -> Any:
            for statement, params in statements:
                sent.append(statement)
                yield statement, params

        return execute_concurrent(session, tap(), **kwargs)

    monkeypatch.setattr("kjournal.cassandra.writer.execute_concurrent", recording)
    store = make_store()
    records = [
        with_big_payload(append_record(n, range(10 * n + 1, 10 * n + 11)), 1500) for n in range(60)
    ]
    replicate(store, [*records, with_big_payload(append_record(60, [601]), 70_000)])

    assert stored_seq_nrs(backend) == list(range(1, 602))
    batches = [s for s in sent if isinstance(s, BatchStatement)]
    assert len(batches) > 10
    sizes: list[int] = []
    for batch in batches:
        size = sum(
            len(value)
            for _, _, values in batch._statements_and_parameters
            for value in values
            if isinstance(value, bytes)
        )
        assert size < 50 * 1024, size
        sizes.append(size)
    assert max(sizes) > 30 * 1024  # the estimate does not waste most of the room


class CountingSession:
    """A session that counts the requests in flight through `execute_async`."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def execute_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        future = self._session.execute_async(*args, **kwargs)

        def done(_: object) -> None:
            with self._lock:
                self.in_flight -= 1

        future.add_callbacks(done, done)
        return future


def test_statements_in_flight_are_bounded(kj_session: Session, tables: TableNames) -> None:
    session = CountingSession(kj_session)
    store = CassandraReplicatedStore(session, tables, concurrency=4)
    records = [append_record(n, [1, 2], Key(TOPIC, f"id{n}")) for n in range(100)]
    result = replicate(store, records)
    assert result.events == 200
    assert session.most == 4


@pytest.mark.timeout(120)
def test_statements_built_on_the_driver_thread_never_block_it(
    kj_session: Session, tables: TableNames
) -> None:
    # With one request in flight, every statement after a wave's first is built inside a driver
    # callback: anything blocking there (such as preparing the first head UPDATE of its kind)
    # would wait for itself forever. The first journal is new, so its wave starts with an
    # INSERT and the UPDATEs of the others are all built on the driver's thread.
    store = CassandraReplicatedStore(kj_session, tables, concurrency=1)
    keys = [Key(TOPIC, f"id{n}") for n in range(20)]
    replicate(store, [append_record(n, [1, 2], key) for n, key in enumerate(keys) if n > 0])
    hour = ExpireAfter.of(1, "hour")
    later = [append_record(20 + n, [3], key, expire_after=hour) for n, key in enumerate(keys)]
    later += [delete_record(40 + n, 2, key) for n, key in enumerate(keys)]
    result = replicate(store, later)
    assert (result.batches, result.events) == (40, 20)
