"""The topic feed against the journal read: for histories with resends, conflicts, deletes and
purges, replicated up to every point, the feed delivers per journal exactly what a read returns
(its events, then its deletes and purges applied), and resuming after any entry, inside a
multi-event append too, delivers the rest of the feed with no gap and no repeat, whatever the
journal states the feed has to look up (in Cassandra, in the tail, from the log start)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import orjson
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.errors import InvalidCursor
from kjournal.errors import InvalidInput
from kjournal.errors import PositionGone
from kjournal.feed import AppendEvents
from kjournal.feed import AppendLines
from kjournal.feed import Control
from kjournal.feed import Cursor
from kjournal.feed import FeedControl
from kjournal.feed import FeedEnd
from kjournal.feed import FeedEntry
from kjournal.feed import FeedEvent
from kjournal.feed import FeedHeartbeat
from kjournal.feed import FeedRequest
from kjournal.feed import Position
from kjournal.feed import RecordEntries
from kjournal.feed import TopicFeed
from kjournal.feed import entry_to_json
from kjournal.feed.reading import RESOLVE_CONCURRENCY
from kjournal.feed.reading import SCAN_CONCURRENCY
from kjournal.memory import InMemoryEventualReader
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import Key
from kjournal.read import JournalReader
from kjournal_reader.routes.topics import _feed_lines

from tests.support.histories import KEY
from tests.support.histories import MARK
from tests.support.histories import NOISE
from tests.support.histories import OTHER
from tests.support.histories import PURGE
from tests.support.histories import TOPIC
from tests.support.histories import Op
from tests.support.histories import a
from tests.support.histories import d
from tests.support.histories import fully_replicated
from tests.support.histories import histories_with_retries
from tests.support.histories import log_of
from tests.support.histories import replicate
from tests.support.histories import retry
from tests.support.histories import value
from tests.support.memory_read import InMemoryPartitionLog


def _feed(
    log: InMemoryPartitionLog,
    store: InMemoryReplicatedStore,
    request: FeedRequest,
    capacity: int = 10_000,
) -> list[FeedEntry]:
    reader = JournalReader(InMemoryEventualReader(store), log, log)
    feed = TopicFeed(log, reader, capacity)

    async def run() -> list[FeedEntry]:
        plan = await feed.plan(request)
        return [entry async for entry in feed.entries(plan)]

    return asyncio.run(run())


def _project(entries: Sequence[FeedEntry], key: Key = KEY) -> list[tuple[int, object]]:
    """What a projection built from the feed holds for `key`: its events, deletes and purges
    applied in order."""
    events: dict[int, object] = {}
    for entry in entries:
        if isinstance(entry, FeedEnd | FeedHeartbeat) or entry.id != key.id:
            continue
        if isinstance(entry, FeedEvent):
            events[entry.record.seq_nr] = value(entry.record)
        elif entry.kind is Control.DELETE:
            assert entry.to is not None
            events = {n: p for n, p in events.items() if n > entry.to}
        elif entry.kind is Control.PURGE:
            events = {}
    return sorted(events.items())


def _check(ops: list[Op], capacity: int, splits: Sequence[int] | None = None) -> None:
    log = log_of(ops)
    truth, _ = fully_replicated(log)
    records = log.written[0]
    for split in range(len(records) + 1) if splits is None else splits:
        store = InMemoryReplicatedStore()
        replicate(store, records[:split])
        full = _feed(log, store, FeedRequest(TOPIC), capacity)
        assert _project(full) == truth, f"split at {split}"
        assert isinstance(full[-1], FeedEnd)
        assert full[-1].cursor == Cursor({0: Position(len(records))})
        for index, entry in enumerate(full[:-1]):
            resumed = _feed(log, store, FeedRequest(TOPIC, after=entry.cursor), capacity)
            assert resumed == full[index + 1 :], f"split at {split}, resumed after {index}"


@pytest.mark.parametrize("capacity", [1, 10_000])
@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("multi-event appends", [a(1, 3), NOISE, a(4, 6)]),
        ("a resent append", [a(1), retry(2), retry(2), a(3)]),
        ("overlapping appends", [a(1, 3), retry(2, 4), retry(1)]),
        ("a resend with other content", [a(1, 2), retry(2, 3, variant=1)]),
        ("a resend after a delete", [a(1, 3), d(3), retry(3, 4)]),
        ("a resend after a purge is a new journal", [a(1, 3), PURGE, retry(1, 2, variant=1)]),
        ("deletes and marks", [a(1, 2), MARK, d(1), a(3, 5), d(9), NOISE]),
        ("purge then delete", [a(1, 3), PURGE, d(2), a(1)]),
    ],
)
def test_the_feed_agrees_with_reads_and_resumes_anywhere(
    name: str, ops: list[Op], capacity: int
) -> None:
    _check(ops, capacity)


@settings(max_examples=60, deadline=None)
@given(ops=histories_with_retries(), capacity=st.sampled_from([1, 2, 10_000]), data=st.data())
def test_random_histories(ops: list[Op], capacity: int, data: st.DataObject) -> None:
    split = data.draw(st.integers(0, len(log_of(ops).written[0])))
    _check(ops, capacity, [split])


def test_dropped_appends_and_marks_are_never_delivered():
    log = log_of([a(1, 2), retry(2, 3, variant=1), retry(1, 2), MARK, a(3)])
    entries = _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC))
    delivered = [
        (e.record.partition_offset.offset, e.record.seq_nr)
        for e in entries
        if isinstance(e, FeedEvent)
    ]
    assert delivered == [(0, 1), (0, 2), (4, 3)]


def test_deletes_are_delivered_with_the_bound_they_take_effect_at():
    log = log_of([d(5), a(1, 3), d(9), PURGE, PURGE])
    entries = _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC))
    controls = [(e.kind, e.offset, e.to) for e in entries if isinstance(e, FeedControl)]
    # the first delete and the second purge meet no journal: the replicator ignores them too
    assert controls == [(Control.DELETE, 2, 3), (Control.PURGE, 3, None)]


def test_the_id_prefix_filter_skips_other_journals():
    log = log_of([a(1), NOISE, a(2)])
    entries = _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC, id_prefix="oth"))
    assert {e.id for e in entries if isinstance(e, FeedEvent)} == {OTHER.id}


def test_from_end_reads_nothing_and_ends_at_the_end():
    log = log_of([a(1), a(2)])
    entries = _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC, from_end=True))
    assert entries == [FeedEnd(Cursor({0: Position(2)}))]


def test_a_cursor_before_the_log_start_is_gone():
    log = log_of([a(1), a(2), a(3)])
    log.beginning[0] = 2
    with pytest.raises(PositionGone) as gone:
        _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC, after=Cursor({0: Position(1)})))
    assert (gone.value.partition, gone.value.offset, gone.value.earliest) == (0, 1, 2)


@pytest.mark.parametrize(
    "cursor",
    [Cursor({0: Position(4)}), Cursor({0: Position(3, 1)}), Cursor({1: Position(0)})],
)
def test_a_cursor_past_the_end_or_of_other_partitions_is_invalid(cursor: Cursor):
    log = log_of([a(1), a(2), a(3)])
    with pytest.raises(InvalidCursor):
        _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC, after=cursor))


def test_a_partition_the_topic_does_not_have_is_invalid_input():
    log = log_of([a(1)])
    with pytest.raises(InvalidInput):
        _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC, partitions=[0, 3]))


def _follow(
    log: InMemoryPartitionLog, store: InMemoryReplicatedStore, request: FeedRequest
) -> list[FeedEntry]:
    """What a live tail of `request` delivers of the log's records: the entries between the
    start heartbeat and the one after the source's first batch (which holds every record)."""
    reader = JournalReader(InMemoryEventualReader(store), log, log)
    feed = TopicFeed(log, reader)

    async def run() -> list[FeedEntry]:
        following = feed.follow(await feed.plan(request), heartbeat_s=0)
        assert isinstance(await anext(following), FeedHeartbeat)
        entries: list[FeedEntry] = []
        while not isinstance(entry := await anext(following), FeedHeartbeat):
            entries.append(entry)
        await following.aclose()  # type: ignore[attr-defined]
        return entries

    return asyncio.run(run())


@settings(max_examples=60, deadline=None)
@given(ops=histories_with_retries(), data=st.data())
def test_a_live_tail_from_any_cursor_delivers_what_a_catch_up_from_it_does(
    ops: list[Op], data: st.DataObject
) -> None:
    # The live tail looks up the states of a batch's new journals all at once, ahead of their
    # records (the catch-up, one at a time as they come): the entries must not differ.
    log = log_of(ops)
    records = log.written[0]
    store = InMemoryReplicatedStore()
    replicate(store, records[: data.draw(st.integers(0, len(records)))])
    full = _feed(log, store, FeedRequest(TOPIC))
    index = data.draw(st.integers(0, len(full) - 1))
    request = FeedRequest(TOPIC, after=full[index - 1].cursor if index else None)
    caught_up = _feed(log, store, request)
    assert _follow(log, store, request) == caught_up[:-1]


def test_following_delivers_what_a_catch_up_does_then_heartbeats_then_new_records():
    log = log_of([a(1, 3), NOISE, d(2)])
    store = InMemoryReplicatedStore()
    caught_up = _feed(log, store, FeedRequest(TOPIC))
    reader = JournalReader(InMemoryEventualReader(store), log, log)
    feed = TopicFeed(log, reader)

    async def run() -> tuple[list[FeedEntry], list[FeedEntry]]:
        plan = await feed.plan(FeedRequest(TOPIC))
        following = feed.follow(plan, heartbeat_s=0)
        first = [await anext(following) for _ in range(len(caught_up) + 1)]
        more_ops = log_of([a(1, 3), NOISE, d(2), a(4, 5)]).written[0][3:]
        for record in more_ops:
            log.append(record.key or b"", record.value, record.headers, record.timestamp_ms or 0)
        then: list[FeedEntry] = []
        while len([e for e in then if isinstance(e, FeedEvent)]) < 2:
            then.append(await anext(following))
        await following.aclose()  # type: ignore[attr-defined]
        return first, then

    first, then = asyncio.run(run())
    start = FeedHeartbeat(Cursor({0: Position(0)}))
    # the heartbeat with the start cursor, the same entries, a heartbeat at the end's cursor
    assert first == [start, *caught_up[:-1], FeedHeartbeat(caught_up[-1].cursor)]
    events = [e for e in then if isinstance(e, FeedEvent)]
    assert [(e.record.seq_nr, e.index) for e in events] == [(4, 0), (5, 1)]
    assert events[-1].cursor == Cursor({0: Position(4)})


def test_a_follower_that_retention_passed_is_told_so():
    log = log_of([a(1), a(2)])
    feed = TopicFeed(
        log, JournalReader(InMemoryEventualReader(InMemoryReplicatedStore()), log, log)
    )

    async def run() -> None:
        plan = await feed.plan(FeedRequest(TOPIC))
        following = feed.follow(plan, heartbeat_s=0)
        while not isinstance(await anext(following), FeedEvent):
            pass  # the first event, seqNr 1; the follower is slow from here on
        for record in log_of([a(1), a(2), a(3), a(4)]).written[0][2:]:
            log.append(record.key or b"", record.value, record.headers, record.timestamp_ms or 0)
        log.beginning[0] = 3  # retention removed offset 2 (seqNr 3) before the follower read it

        async def drain() -> None:
            while True:
                await anext(following)

        with pytest.raises(PositionGone) as gone:
            await drain()
        assert (gone.value.offset, gone.value.earliest) == (2, 3)

    asyncio.run(run())


def test_an_undecodable_record_is_a_quarantined_entry_and_parks_its_journal():
    log = log_of([a(1)])
    log.append(KEY.id.encode(), None, [("journal.action", b"{not json")], 1_700_000_000_000)
    for record in log_of([a(1), a(2), NOISE]).written[0][1:]:
        log.append(record.key or b"", record.value, record.headers, record.timestamp_ms or 0)
    entries = _feed(log, InMemoryReplicatedStore(), FeedRequest(TOPIC))
    seen = [
        (e.id, e.record.seq_nr) if isinstance(e, FeedEvent) else (e.id, e.kind, e.offset)
        for e in entries
        if isinstance(e, FeedEvent | FeedControl)
    ]
    assert seen[:3] == [
        (KEY.id, 1),
        (KEY.id, Control.QUARANTINED, 1),
        (KEY.id, Control.QUARANTINED, 2),  # seqNr 2, parked behind it
    ]
    assert [s for s in seen[3:] if s[0] == OTHER.id] == [(OTHER.id, n) for n in (1, 2, 3)]
    parked = next(e for e in entries if isinstance(e, FeedControl) and e.offset == 2)
    assert parked.reason == "parked behind the quarantined record at offset 1"


class _Overlap:
    """Wraps one async method of an object: how many of its calls were in flight at most."""

    def __init__(self, inner: object, method: str) -> None:
        self._inner = inner
        self._method = method
        self.active = 0
        self.most = 0

    def __getattr__(self, name: str) -> object:
        attribute = getattr(self._inner, name)
        if name != self._method:
            return attribute

        async def counted(*args: object, **kwargs: object) -> object:
            self.active += 1
            self.most = max(self.most, self.active)
            try:
                for _ in range(3):  # let every other ready call start before this one ends
                    await asyncio.sleep(0)
                return await attribute(*args, **kwargs)
            finally:
                self.active -= 1

        return counted


def test_a_live_tail_looks_up_new_journals_together_but_scans_kafka_a_few_at_a_time():
    # 40 journals first met at offset 1: each lookup reads the head, then scans the tail
    # [0, 1) from Kafka (no tail cache here), which holds a pooled consumer in a reader.
    log = log_of([a(1, key=Key(TOPIC, f"j{n}")) for n in range(40)])
    heads = _Overlap(InMemoryEventualReader(InMemoryReplicatedStore()), "head")
    scans = _Overlap(log, "tail")
    reader = JournalReader(heads, log, scans)  # type: ignore[arg-type]
    feed = TopicFeed(log, reader)

    async def run() -> list[FeedEntry]:
        request = FeedRequest(TOPIC, after=Cursor({0: Position(1)}))
        following = feed.follow(await feed.plan(request), heartbeat_s=0)
        entries = [await anext(following) for _ in range(40)]
        await following.aclose()  # type: ignore[attr-defined]
        return entries

    entries = asyncio.run(run())
    assert [e.id for e in entries if isinstance(e, FeedEvent)] == [f"j{n}" for n in range(1, 40)]
    assert heads.most == min(39, RESOLVE_CONCURRENCY) > SCAN_CONCURRENCY
    assert scans.most == SCAN_CONCURRENCY


class _PointerReadBeforeAPurge(InMemoryEventualReader):
    """pointer2 as it was before the replicator applied a purge: the feed reads pointer2 first
    and the head after it, and the replicated purge has deleted the head in between."""

    def __init__(self, store: InMemoryReplicatedStore, pointer2: int | None) -> None:
        super().__init__(store)
        self._stale = pointer2

    async def pointer2(self, topic: str, partition: int) -> int | None:
        return self._stale


@pytest.mark.parametrize(
    ("name", "ops", "resume_at", "stale"),
    [
        ("met at its purge, its tail in the view", [a(1, 2), a(3, 4), PURGE, a(1)], 2, 0),
        ("met at its purge, nothing left in the view", [a(1, 2), a(3, 4), PURGE, a(1)], 2, 1),
        ("met before its purge", [a(1, 2), a(3, 4), a(5), PURGE, a(1)], 2, 1),
        ("other journals between", [a(1, 2), NOISE, a(3, 4), NOISE, PURGE, a(1)], 4, 3),
    ],
)
def test_a_journal_whose_head_a_purge_deleted_after_pointer2_was_read_keeps_its_past(
    name: str, ops: list[Op], resume_at: int, stale: int
) -> None:
    """A feed resumed after a journal's first records meets it again: its state before the
    record comes from Cassandra's head and Kafka's tail after pointer2. When the purge that
    deleted the head was replicated after pointer2 was read, no head is not an empty journal:
    the state is folded from the log start, and the purge is delivered where it sits."""
    log = log_of(ops)
    purge_at = ops.index(PURGE)
    store = InMemoryReplicatedStore()
    replicate(store, log.written[0][: purge_at + 1])  # up to the purge: no head left
    reader = JournalReader(_PointerReadBeforeAPurge(store, stale), log, log)
    feed = TopicFeed(log, reader)
    request = FeedRequest(TOPIC, after=Cursor({0: Position(resume_at)}))

    async def run() -> list[FeedEntry]:
        return [entry async for entry in feed.entries(await feed.plan(request))]

    entries = [e for e in asyncio.run(run()) if isinstance(e, FeedControl | FeedEvent)]
    mine = [e for e in entries if e.id == KEY.id]
    kinds = [e.kind if isinstance(e, FeedControl) else e.record.seq_nr for e in mine]
    expected_before = [
        n
        for op in ops[resume_at:purge_at]
        if op.kind == "append" and op.key == KEY
        for n in range(op.first, op.last + 1)
    ]
    assert kinds == [*expected_before, Control.PURGE, 1], name


def _catch_up_lines(
    log: InMemoryPartitionLog, store: InMemoryReplicatedStore, request: FeedRequest
) -> tuple[list[object], set[type]]:
    """The lines the reader writes of a catch-up (its route's encoder over `record_entries`),
    parsed, and the kinds of what `record_entries` yielded."""
    reader = JournalReader(InMemoryEventualReader(store), log, log)
    feed = TopicFeed(log, reader, 10_000)

    async def run() -> list[RecordEntries]:
        plan = await feed.plan(request)
        return [entries async for entries in feed.record_entries(plan)]

    yielded = asyncio.run(run())
    lines = b"".join(_feed_lines(entries).data for entries in yielded)
    return [orjson.loads(line) for line in lines.splitlines()], {type(e) for e in yielded}


@settings(max_examples=60, deadline=None)
@given(ops=histories_with_retries(), data=st.data())
def test_a_catch_up_writes_the_lines_of_its_entries_from_anywhere(
    ops: list[Op], data: st.DataObject
) -> None:
    """The lines written from AppendLines (plain JSON containers) and AppendEvents are the
    lines of the entries, from the start and resumed after any entry."""
    log = log_of(ops)
    store = InMemoryReplicatedStore()
    entries = _feed(log, store, FeedRequest(TOPIC))
    after = data.draw(st.sampled_from([None, *(entry.cursor for entry in entries[:-1])]))
    request = FeedRequest(TOPIC, after=after)
    lines, kinds = _catch_up_lines(log, store, request)
    resumed = _feed(log, store, request)
    assert lines == [entry_to_json(entry) for entry in resumed]
    # the histories' appends are plain JSON containers: none is decoded to be written
    assert AppendEvents not in kinds
    assert AppendLines in kinds or not any(isinstance(e, FeedEvent) for e in resumed)
