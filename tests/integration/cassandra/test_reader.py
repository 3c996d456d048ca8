"""CassandraEventualReader against the real node, on rows written with raw CQL."""

from __future__ import annotations

import asyncio
import uuid
from contextlib import aclosing
from datetime import timedelta

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.reader import DataIntegrity
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.session import Pager
from kjournal.cassandra.session import open_session
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.errors import CassandraUnavailable
from kjournal.errors import SchemaError
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead

from tests.integration.cassandra.raw import BASE_TIME
from tests.integration.cassandra.raw import RawEvent
from tests.integration.cassandra.raw import insert_events
from tests.integration.cassandra.raw import insert_head
from tests.integration.cassandra.raw import sample_events

pytestmark = [pytest.mark.cassandra, pytest.mark.anyio]

KEY = Key("journal", "Entity-1")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def collect(
    reader: CassandraEventualReader, key: Key, head: JournalHead, from_: int = 1
) -> list[EventRecord]:
    async with aclosing(reader.events(key, head, SeqNr(from_))) as events:
        return [event async for event in events]


async def stored_journal(
    session: Session,
    tables: TableNames,
    key: Key,
    segment_size: int,
    events: list[RawEvent],
    **head,
) -> tuple[CassandraEventualReader, JournalHead]:
    insert_events(session, tables, key, segment_size, events)
    insert_head(
        session,
        tables,
        key,
        seq_nr=max(e.seq_nr for e in events),
        segment_size=segment_size,
        **head,
    )
    reader = await CassandraEventualReader.create(session, tables)
    found = await reader.head(key)
    assert found is not None
    return reader, found


@pytest.mark.parametrize("segment_size", [2, 10_000])
async def test_events_read_back_identical(kj_session: Session, tables: TableNames, segment_size):
    events = sample_events(25)
    reader, head = await stored_journal(kj_session, tables, KEY, segment_size, events)

    assert head.segment_size == segment_size
    assert head.seq_nr == 25
    assert await collect(reader, KEY, head) == [e.expected() for e in events]


@pytest.mark.parametrize("segment_size", [2, 3, 10_000])
async def test_reading_from_every_seq_nr(kj_session: Session, tables: TableNames, segment_size):
    events = sample_events(12)
    reader, head = await stored_journal(kj_session, tables, KEY, segment_size, events)
    expected = [e.expected() for e in events]

    for from_ in range(1, 15):
        assert await collect(reader, KEY, head, from_) == expected[from_ - 1 :], from_


@pytest.mark.parametrize(
    ("delete_to", "from_", "first"), [(7, 1, 8), (7, 8, 8), (7, 10, 10), (1, 1, 2)]
)
async def test_delete_to_is_honoured(
    kj_session: Session, tables: TableNames, delete_to, from_, first
):
    events = sample_events(12)
    reader, head = await stored_journal(kj_session, tables, KEY, 3, events, delete_to=delete_to)

    assert head.delete_to == delete_to
    seq_nrs = [e.seq_nr for e in await collect(reader, KEY, head, from_)]
    assert seq_nrs == list(range(first, 13))


async def test_everything_deleted_reads_nothing(kj_session: Session, tables: TableNames):
    reader, head = await stored_journal(kj_session, tables, KEY, 3, sample_events(5), delete_to=5)

    assert await collect(reader, KEY, head) == []


@pytest.mark.parametrize(
    "seq_nrs",
    [
        [*range(1, 10), *range(11, 21)],  # the last seqNr of segment 0 missing (ends Scala's read)
        [*range(1, 11), *range(12, 21)],  # the first seqNr of segment 1 missing
        [*range(1, 11), *range(21, 26), 31],  # whole segments 1 and 2 missing
        [15, 16, 40],  # nothing in the first segments at all
    ],
)
async def test_seq_nr_gaps_at_segment_boundaries_do_not_end_the_read(
    kj_session: Session, tables: TableNames, seq_nrs
):
    events = [RawEvent(n, offset=n, timestamp=BASE_TIME) for n in seq_nrs]
    reader, head = await stored_journal(kj_session, tables, KEY, 10, events)

    assert [e.seq_nr for e in await collect(reader, KEY, head)] == seq_nrs


async def test_rows_above_the_head_are_read_within_its_segments(
    kj_session: Session, tables: TableNames
):
    # Rows above the head: a replication in progress, or a head kafka-journal moved back.
    insert_events(kj_session, tables, KEY, 10, sample_events(25))
    insert_head(kj_session, tables, KEY, seq_nr=12, segment_size=10)
    reader = await CassandraEventualReader.create(kj_session, tables)
    head = await reader.head(KEY)
    assert head is not None

    assert [e.seq_nr for e in await collect(reader, KEY, head)] == list(range(1, 21))


async def test_head_is_found_in_the_old_100_bucket_layout(kj_session: Session, tables: TableNames):
    key = Key("journal", "old-layout-entity")  # buckets differ: see the assertion below
    assert metajournal_bucket(key.id, 10_000) != metajournal_bucket(key.id, 100)
    insert_head(kj_session, tables, key, seq_nr=3, segment_size=10, offset=5, buckets=100)
    reader = await CassandraEventualReader.create(kj_session, tables)

    head = await reader.head(key)
    assert head is not None
    assert head.partition_offset.offset == 5

    insert_head(kj_session, tables, key, seq_nr=4, segment_size=10, offset=6)
    head = await reader.head(key)
    assert head is not None
    assert head.partition_offset.offset == 6  # the current layout wins


async def test_no_head(kj_session: Session, tables: TableNames):
    reader = await CassandraEventualReader.create(kj_session, tables)

    assert await reader.head(Key("journal", "nobody")) is None


async def test_ids_lists_every_journal_once(kj_session: Session, tables: TableNames):
    current = {f"id-{n}" for n in range(300)}
    old = {f"OLD-{n}" for n in range(40)}
    both = {f"Both-{n}" for n in range(5)}
    for id_ in current | both:
        insert_head(kj_session, tables, Key("journal", id_), seq_nr=1, segment_size=10)
    for id_ in old | both:
        insert_head(kj_session, tables, Key("journal", id_), seq_nr=1, segment_size=10, buckets=100)
    insert_head(kj_session, tables, Key("other", "elsewhere"), seq_nr=1, segment_size=10)
    reader = await CassandraEventualReader.create(
        kj_session, tables, fetch_size=7, ids_concurrency=8
    )

    async with aclosing(reader.ids("journal")) as ids:
        listed = [id_ async for id_ in ids]

    assert sorted(listed) == sorted(current | old | both)


async def test_paging_with_a_small_fetch_size(
    kj_session: Session, tables: TableNames, monkeypatch: pytest.MonkeyPatch
):
    events = [
        RawEvent(n, offset=n, timestamp=BASE_TIME + timedelta(milliseconds=n))
        for n in range(1, 501)
    ]
    insert_events(kj_session, tables, KEY, 10_000, events)
    insert_head(kj_session, tables, KEY, seq_nr=500, segment_size=10_000)
    reader = await CassandraEventualReader.create(kj_session, tables, fetch_size=7)
    head = await reader.head(KEY)
    assert head is not None
    pages: list[int] = []
    next_page = Pager.next_page

    async def counting(self: Pager):
        page = await next_page(self)
        if page is not None:
            pages.append(len(page))
        return page

    monkeypatch.setattr(Pager, "next_page", counting)

    read = await collect(reader, KEY, head)

    assert [e.seq_nr for e in read] == list(range(1, 501))
    assert max(pages) == 7
    assert len(pages) >= 500 // 7


async def test_reading_never_blocks_the_event_loop(kj_session: Session, tables: TableNames):
    events = [RawEvent(n, offset=n) for n in range(1, 301)]
    reader, head = await stored_journal(kj_session, tables, KEY, 50, events)
    reader = await CassandraEventualReader.create(kj_session, tables, fetch_size=5)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    read = await collect(reader, KEY, head)
    ticker.cancel()

    assert len(read) == 300
    assert ticks >= 60  # the loop ran other work while every page was fetched


async def test_stopping_early_releases_the_read(kj_session: Session, tables: TableNames):
    events = [RawEvent(n, offset=n) for n in range(1, 101)]
    reader, head = await stored_journal(kj_session, tables, KEY, 10, events)
    reader = await CassandraEventualReader.create(kj_session, tables, fetch_size=3)

    async with aclosing(reader.events(KEY, head, SeqNr(1))) as stream:
        async for event in stream:
            if event.seq_nr == 4:
                break

    assert len(await collect(reader, KEY, head)) == 100


async def test_a_repeated_seq_nr_reads_once_the_first_copy_by_offset(
    kj_session: Session, tables: TableNames, caplog: pytest.LogCaptureFixture
):
    events = [RawEvent(n, offset=n) for n in range(1, 6)]
    resent = RawEvent(3, offset=9, timestamp=BASE_TIME + timedelta(seconds=1))
    reader, head = await stored_journal(kj_session, tables, KEY, 10, [*events, resent])

    read = await collect(reader, KEY, head)
    assert [(e.seq_nr, e.partition_offset.offset) for e in read] == [(n, n) for n in range(1, 6)]
    assert "seqNr 3 is stored more than once" in caplog.text


async def test_rows_of_another_head_incarnation(
    kj_session: Session, tables: TableNames, caplog: pytest.LogCaptureFixture
):
    record_id, stale = uuid.uuid4(), uuid.uuid4()
    events = [
        RawEvent(n, offset=n, meta_record_id=record_id if n > 2 else stale) for n in range(1, 6)
    ]
    reader, head = await stored_journal(kj_session, tables, KEY, 10, events, record_id=record_id)

    assert [e.seq_nr for e in await collect(reader, KEY, head)] == [1, 2, 3, 4, 5]
    assert any("belongs to a purged head" in m for m in caplog.messages)

    strict = await CassandraEventualReader.create(
        kj_session, tables, integrity=DataIntegrity(correlate_events_with_meta=True)
    )
    assert [e.seq_nr for e in await collect(strict, KEY, head)] == [3, 4, 5]


async def test_pointer2(kj_session: Session, tables: TableNames):
    kj_session.execute(
        f"INSERT INTO {tables.qualified(tables.pointer2)} (topic, partition, offset) VALUES ('journal', 2, 41)"
    )
    reader = await CassandraEventualReader.create(kj_session, tables)

    assert await reader.pointer2("journal", 2) == 41
    assert await reader.pointer2("journal", 3) is None


async def test_quarantined_returns_the_oldest_record(kj_session: Session, tables: TableNames):
    reader = await CassandraEventualReader.create(kj_session, tables)
    assert await reader.quarantined(KEY) is None
    for partition, offset in ((1, 70), (1, 12), (0, 99)):
        kj_session.execute(
            f"INSERT INTO {tables.qualified(tables.quarantine)} "
            "(topic, id, partition, offset, reason, header, quarantined_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (KEY.topic, KEY.id, partition, offset, f"bad at {offset}", b"{", BASE_TIME),
        )

    found = await reader.quarantined(KEY)

    assert found is not None
    assert (found.partition, found.offset, found.reason) == (0, 99, "bad at 99")
    assert found.header == b"{"
    assert found.value is None
    assert found.quarantined_at == BASE_TIME


async def test_an_unmigrated_keyspace_is_a_schema_error(kj_session: Session, keyspace: str):
    with pytest.raises(SchemaError, match="journal"):
        await CassandraEventualReader.create(kj_session, TableNames(keyspace=keyspace))


async def test_an_unreachable_node_is_cassandra_unavailable():
    settings = CassandraSettings(port=1, connect_timeout=1.0)

    with pytest.raises(CassandraUnavailable, match="connecting to Cassandra"):
        async with open_session(settings):
            pass


async def test_open_session_gives_a_working_session(cassandra_settings: CassandraSettings, tables):
    async with open_session(cassandra_settings) as session:
        reader = await CassandraEventualReader.create(session, tables)
        assert await reader.head(KEY) is None
