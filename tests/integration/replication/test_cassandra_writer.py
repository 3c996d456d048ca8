"""replicate_partition into the real Cassandra node: kafka-journal's ReplicatedCassandraTest and
TopicReplicatorSpec scenarios (anatomy §9.2), checked with raw CQL and with the eventual reader."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import pytest
from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent
from cassandra.query import BatchStatement
from cassandra.util import Duration
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.model import ExpireAfter, Key, SeqNr
from kjournal.model.head import JournalHead
from kjournal.replicate import ReplicationResult, replicate_partition
from kjournal.wire.record import ConsumedRecord

from tests.integration.replication.conftest import StoreFactory
from tests.unit.fold.builders import (
    KEY,
    T0,
    TOPIC,
    append_record,
    at,
    delete_record,
    mark_record,
    purge_record,
    timestamp_of,
)
from tests.unit.test_replicate import broken

pytestmark = pytest.mark.cassandra

KEY1 = Key(TOPIC, "id1")
SEGMENT_SIZES = [2, 10_000]


def replicate(
    store: CassandraReplicatedStore,
    records: Sequence[ConsumedRecord],
    now: Any = T0,
) -> ReplicationResult:
    return replicate_partition(TOPIC, 0, records, store, now)


class Raw:
    """The tables as CQL shows them."""

    def __init__(self, session: Session, tables: TableNames) -> None:
        self.session = session
        self.tables = tables

    def _q(self, table: str) -> str:
        return self.tables.qualified(table)

    def rows(self, key: Key = KEY) -> list[Any]:
        rows = self.session.execute(
            f"SELECT segment, seq_nr, partition, offset, timestamp, origin, version, "
            f"meta_record_id, tags, payload_type, payload_txt, headers, metadata, "
            f"WRITETIME(payload_type) AS written FROM {self._q(self.tables.journal)} "
            "WHERE id = %s AND topic = %s ALLOW FILTERING",
            (key.id, key.topic),
        )
        return sorted(rows, key=lambda row: row.seq_nr)

    def seq_nrs(self, key: Key = KEY) -> list[int]:
        return [row.seq_nr for row in self.rows(key)]

    def head(self, key: Key = KEY) -> Any:
        heads = list(
            self.session.execute(
                f"SELECT segment, partition, offset, segment_size, seq_nr, delete_to, created, "
                f"created_date, updated, expire_after, expire_on, record_id, origin, "
                f"WRITETIME(offset) AS written FROM {self._q(self.tables.metajournal)} "
                "WHERE topic = %s AND id = %s ALLOW FILTERING",
                (key.topic, key.id),
            )
        )
        assert len(heads) <= 1
        if heads:
            assert heads[0].segment == metajournal_bucket(key.id)
        return heads[0] if heads else None

    def pointer2(self, partition: int = 0) -> Any:
        return self.session.execute(
            f"SELECT offset, created, updated FROM {self._q(self.tables.pointer2)} "
            "WHERE topic = %s AND partition = %s",
            (TOPIC, partition),
        ).one()

    def quarantine(self, key: Key = KEY) -> list[Any]:
        return list(
            self.session.execute(
                f"SELECT * FROM {self._q(self.tables.quarantine)} WHERE topic = %s AND id = %s",
                (key.topic, key.id),
            )
        )

    def insert_row(self, key: Key, segment: int, seq_nr: int) -> None:
        self.session.execute(
            f"INSERT INTO {self._q(self.tables.journal)} "
            "(id, topic, segment, seq_nr, timestamp, partition, offset) "
            "VALUES (%s, %s, %s, %s, %s, 0, 0)",
            (key.id, key.topic, segment, seq_nr, T0),
        )


@pytest.fixture
def raw(cassandra_session: Session, tables: TableNames) -> Raw:
    return Raw(cassandra_session, tables)


def read_events(session: Session, tables: TableNames, key: Key = KEY) -> list[int]:
    """The seqNrs CassandraEventualReader returns for the journal."""

    async def read() -> list[int]:
        reader = await CassandraEventualReader.create(session, tables)
        head = await reader.head(key)
        if head is None:
            return []
        return [record.seq_nr async for record in reader.events(key, head, SeqNr(1))]

    return asyncio.run(read())


def naive(value: Any) -> Any:
    return value.replace(tzinfo=None)


@pytest.mark.parametrize("segment_size", SEGMENT_SIZES)
def test_append(
    make_store: StoreFactory,
    raw: Raw,
    segment_size: int,
    writer_session: Session,
    tables: TableNames,
) -> None:
    store = make_store(segment_size=segment_size)
    replicate(store, [append_record(0, [1]), append_record(1, [2, 3], KEY1)])
    result = replicate(store, [append_record(2, [2, 3])], now=T0 + timedelta(minutes=1))
    assert result.events == 2

    rows = raw.rows()
    assert [(r.segment, r.seq_nr, r.offset) for r in rows] == [
        ((n - 1) // segment_size, n, offset) for n, offset in [(1, 0), (2, 2), (3, 2)]
    ]
    row = rows[1]
    assert (row.partition, row.origin, row.version, row.payload_type) == (
        0,
        "origin",
        "test",
        "json",
    )
    assert row.payload_txt == '{"n":2}'
    assert row.tags == {"tag"}
    assert row.headers == {"h": "v"}
    assert row.timestamp == naive(timestamp_of(2))

    head = raw.head()
    assert (head.partition, head.offset, head.segment_size, head.seq_nr) == (0, 2, segment_size, 3)
    assert head.delete_to is None
    assert (head.created, head.updated) == (naive(T0), naive(T0 + timedelta(minutes=1)))
    assert head.created_date.date() == T0.date()
    assert head.origin == "origin"
    assert {r.meta_record_id for r in rows} == {head.record_id}
    assert raw.pointer2().offset == 2
    assert read_events(writer_session, tables) == [1, 2, 3]
    assert read_events(writer_session, tables, KEY1) == [2, 3]


@pytest.mark.parametrize("segment_size", SEGMENT_SIZES)
def test_repeated_append_is_ignored(make_store: StoreFactory, raw: Raw, segment_size: int) -> None:
    store = make_store(segment_size=segment_size)
    records = [append_record(0, [1, 2]), append_record(1, [3])]
    replicate(store, records)
    head, rows = raw.head(), raw.rows()
    store.set_pointer2(TOPIC, 0, 0, T0, insert=False)  # the pointer update was lost
    result = replicate(store, records, now=T0 + timedelta(hours=1))
    assert (result.batches, result.events) == (0, 0)
    assert raw.head() == head  # WRITETIME included: nothing was rewritten
    assert raw.rows() == rows


@pytest.mark.parametrize("segment_size", SEGMENT_SIZES)
def test_delete(
    make_store: StoreFactory,
    raw: Raw,
    segment_size: int,
    writer_session: Session,
    tables: TableNames,
) -> None:
    store = make_store(segment_size=segment_size)
    replicate(store, [append_record(0, [1, 2, 3, 4, 5])])
    replicate(store, [delete_record(1, 3)], now=T0 + timedelta(minutes=1))
    assert raw.seq_nrs() == [4, 5]
    head = raw.head()
    assert (head.offset, head.seq_nr, head.delete_to) == (1, 5, 3)
    assert read_events(writer_session, tables) == [4, 5]

    replicate(store, [delete_record(2, 2**63 - 1)])
    assert raw.seq_nrs() == []
    head = raw.head()
    assert (head.offset, head.seq_nr, head.delete_to) == (2, 5, 5)


@pytest.mark.parametrize("segment_size", SEGMENT_SIZES)
def test_repeated_delete_is_ignored(make_store: StoreFactory, raw: Raw, segment_size: int) -> None:
    store = make_store(segment_size=segment_size)
    records = [append_record(0, [1, 2, 3]), delete_record(1, 2)]
    replicate(store, records)
    head = raw.head()
    store.set_pointer2(TOPIC, 0, 0, T0, insert=False)
    replicate(store, records[1:], now=T0 + timedelta(hours=1))
    assert raw.head() == head
    assert raw.seq_nrs() == [3]


def test_delete_without_head_is_ignored(make_store: StoreFactory, raw: Raw) -> None:
    store = make_store()
    replicate(store, [delete_record(4, 7)])
    assert raw.head() is None
    assert store.pointer2(TOPIC, 0) == 4
    replicate(store, [append_record(5, [1, 2])])  # a later journal is not hidden by it
    assert raw.seq_nrs() == [1, 2]


@pytest.mark.parametrize("segment_size", SEGMENT_SIZES)
def test_purge(make_store: StoreFactory, raw: Raw, segment_size: int) -> None:
    store = make_store(segment_size=segment_size)
    replicate(store, [append_record(0, [1, 2, 3])])
    first_id = raw.head().record_id
    replicate(store, [purge_record(1)])
    assert raw.head() is None
    assert raw.rows() == []
    replicate(store, [append_record(2, [1])])
    assert raw.head().record_id not in (None, first_id)
    assert raw.seq_nrs() == [1]


def test_purge_without_head_is_ignored(make_store: StoreFactory, raw: Raw) -> None:
    store = make_store()
    result = replicate(store, [purge_record(0)])
    assert result.batches == 0
    assert raw.head() is None
    assert raw.pointer2().offset == 0


def test_purge_clears_neighbouring_segments(make_store: StoreFactory, raw: Raw) -> None:
    store = make_store(segment_size=2)
    replicate(store, [append_record(0, [1, 2, 3, 4, 5, 6]), delete_record(1, 4)])
    # Leftovers a crashed replicator might have left around the live range (anatomy §6.4).
    raw.insert_row(KEY, 1, 3)
    raw.insert_row(KEY, 3, 7)
    replicate(store, [purge_record(2)])
    assert raw.rows() == []
    assert raw.head() is None


def test_expiry_set_update_remove(make_store: StoreFactory, raw: Raw) -> None:
    store = make_store()
    hour, day = ExpireAfter.of(1, "hour"), ExpireAfter.of(1, "day")
    late = T0.replace(hour=23, minute=30)
    replicate(store, [append_record(0, [1], expire_after=hour)], now=late)
    head = raw.head()
    assert head.expire_after == Duration(0, 0, 3_600_000_000_000)
    assert head.expire_on.date() == date(2019, 12, 13)  # UTC

    written = head.written
    replicate(store, [append_record(1, [2], expire_after=hour)], now=late)
    assert raw.head().expire_on.date() == date(2019, 12, 13)
    assert raw.head().written > written

    replicate(store, [append_record(2, [3], expire_after=day)], now=T0)
    head = raw.head()
    assert head.expire_after == Duration(0, 1, 0)
    assert head.expire_on.date() == date(2019, 12, 13)

    replicate(store, [append_record(3, [4])], now=T0)
    head = raw.head()
    assert (head.expire_after, head.expire_on, head.seq_nr) == (None, None, 4)


@pytest.mark.parametrize("segment_size", SEGMENT_SIZES)
def test_seq_nr_gaps_at_segment_boundaries(
    make_store: StoreFactory,
    raw: Raw,
    segment_size: int,
    writer_session: Session,
    tables: TableNames,
) -> None:
    store = make_store(segment_size=segment_size)
    far = 3 * segment_size + 1  # the first seqNr of segment 3: segments 1 and 2 stay empty
    replicate(store, [append_record(0, [1, 2]), append_record(1, [far, far + 1])])
    assert raw.seq_nrs() == [1, 2, far, far + 1]
    assert read_events(writer_session, tables) == [1, 2, far, far + 1]
    replicate(store, [delete_record(2, far)])
    assert raw.seq_nrs() == [far + 1]
    assert read_events(writer_session, tables) == [far + 1]


def test_batched_appends_then_delete_keep_metajournal_right(
    make_store: StoreFactory, raw: Raw, cassandra_session: Session, tables: TableNames
) -> None:
    # PR #676: a head at seqNr 574 (delete_to 544); the slice appends 574 again, 575, deletes 575.
    cassandra_session.execute(
        f"INSERT INTO {tables.qualified(tables.metajournal)} (topic, segment, id, partition, "
        "offset, segment_size, seq_nr, delete_to, record_id, created, updated) "
        "VALUES (%s, %s, %s, 0, 1797078, 10000, 574, 544, %s, %s, %s)",
        (TOPIC, metajournal_bucket(KEY.id), KEY.id, uuid.uuid4(), T0, T0),
    )
    raw.insert_row(KEY, 0, 574)
    store = make_store()
    store.set_pointer2(TOPIC, 0, 1797038, T0, insert=True)
    replicate(
        store,
        [
            append_record(1797039, [574]),
            append_record(1801629, [575]),
            mark_record(1801632),
            delete_record(1801642, 575),
        ],
    )
    head = raw.head()
    assert (head.offset, head.seq_nr, head.delete_to) == (1801642, 575, 575)
    assert raw.rows() == []


def test_record_id_is_set_once(make_store: StoreFactory, raw: Raw) -> None:
    store = make_store()
    replicate(store, [append_record(0, [1])])
    record_id = raw.head().record_id
    assert isinstance(record_id, uuid.UUID)
    replicate(store, [append_record(1, [2]), delete_record(2, 1), append_record(3, [3])])
    assert raw.head().record_id == record_id
    assert {row.meta_record_id for row in raw.rows()} == {record_id}


def test_mark_only_slices_advance_pointer2(make_store: StoreFactory, raw: Raw) -> None:
    store = make_store()
    replicate(store, [mark_record(0), mark_record(1)])
    pointer = raw.pointer2()
    assert (pointer.offset, pointer.created, pointer.updated) == (1, naive(T0), naive(T0))
    later = T0 + timedelta(seconds=5)
    replicate(store, [mark_record(2)], now=later)
    pointer = raw.pointer2()
    assert (pointer.offset, pointer.created, pointer.updated) == (2, naive(T0), naive(later))
    assert store.pointer2(TOPIC, 0) == 2


def test_poison_record_is_quarantined_and_everything_else_replicated(
    make_store: StoreFactory, raw: Raw, writer_session: Session, tables: TableNames
) -> None:
    store = make_store()
    poison = broken(append_record(1, [2]), header=b"\x00not json")
    replicate(
        store,
        [
            append_record(0, [1]),
            poison,
            append_record(2, [1], KEY1),
            append_record(3, [3]),
            broken(append_record(4, [1], Key(TOPIC, "id2")), value=b"\x01\x02"),
            append_record(5, [2], KEY1),
        ],
    )
    assert raw.seq_nrs() == [1]
    assert raw.seq_nrs(KEY1) == [1, 2]
    assert raw.pointer2().offset == 5
    first, parked = raw.quarantine()
    assert (first.partition, first.offset, first.header, first.value) == (
        0,
        1,
        b"\x00not json",
        poison.value,
    )
    assert first.reason.startswith("header:")
    assert first.record_timestamp == naive(timestamp_of(1))
    assert parked.offset == 3
    assert parked.reason == "parked: behind the quarantined record at offset 1"
    (bad_payload,) = raw.quarantine(Key(TOPIC, "id2"))
    assert bad_payload.reason.startswith("payload:")
    assert store.quarantined_from(TOPIC, 0, ["id", "id1", "id2"]) == {"id": 1, "id2": 4}
    assert store.quarantined_from(TOPIC, 1, ["id"]) == {"id": -1}

    async def flagged() -> Any:
        reader = await CassandraEventualReader.create(writer_session, tables)
        return await reader.quarantined(KEY)

    flag = asyncio.run(flagged())
    assert flag is not None
    assert flag.offset == 1

    # Later slices keep the journal quarantined.
    replicate(store, [append_record(6, [4])])
    assert raw.seq_nrs() == [1]
    assert [q.offset for q in raw.quarantine()] == [1, 3, 6]


def test_heads_in_the_old_bucket_layout_are_updated_in_place(
    make_store: StoreFactory, raw: Raw, cassandra_session: Session, tables: TableNames
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
    assert raw.head().delete_to == 1
    assert raw.seq_nrs() == [2]


def with_big_payload(record: ConsumedRecord, size: int) -> ConsumedRecord:
    assert record.value is not None
    padded = record.value.replace(b'{"n":', f'{{"big":"{"x" * size}","n":'.encode())
    return broken(record, value=padded)


def test_journal_rows_go_in_batches_under_the_fail_threshold(
    make_store: StoreFactory, raw: Raw, monkeypatch: pytest.MonkeyPatch
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

    assert raw.seq_nrs() == list(range(1, 602))
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


def test_statements_in_flight_are_bounded(writer_session: Session, tables: TableNames) -> None:
    session = CountingSession(writer_session)
    store = CassandraReplicatedStore(session, tables, concurrency=4)
    records = [append_record(n, [1, 2], Key(TOPIC, f"id{n}")) for n in range(100)]
    result = replicate(store, records)
    assert result.events == 200
    assert session.most == 4


@pytest.mark.timeout(120)
def test_statements_built_on_the_driver_thread_never_block_it(
    writer_session: Session, tables: TableNames
) -> None:
    # With one request in flight, every statement after a wave's first is built inside a driver
    # callback: anything blocking there (such as preparing the first head UPDATE of its kind)
    # would wait for itself forever. The first journal is new, so its wave starts with an
    # INSERT and the UPDATEs of the others are all built on the driver's thread.
    store = CassandraReplicatedStore(writer_session, tables, concurrency=1)
    keys = [Key(TOPIC, f"id{n}") for n in range(20)]
    replicate(store, [append_record(n, [1, 2], key) for n, key in enumerate(keys) if n > 0])
    hour = ExpireAfter.of(1, "hour")
    later = [append_record(20 + n, [3], key, expire_after=hour) for n, key in enumerate(keys)]
    later += [delete_record(40 + n, 2, key) for n, key in enumerate(keys)]
    result = replicate(store, later)
    assert (result.batches, result.events) == (40, 20)
