"""The eventual store's contract: what replication writes through `ports.ReplicatedStore` and what
a read then finds through `ports.EventualReader`, whatever backs them.

kafka-journal's TopicReplicatorSpec and ReplicatedCassandraTest scenarios, written once. A backend
suite subclasses `EventualStoreContract` (no `Test` prefix here, so the base is never collected on
its own) and supplies one pytest fixture, `backend`, an `EventualBackend`. In this repository: the
in-memory store (tests/unit/test_memory_store.py) and the real Cassandra node
(tests/integration/replication/test_cassandra_store.py), each adding the cases only its backend
has.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import Protocol
from typing import TypeVar

from kjournal.model import EventRecord
from kjournal.model import ExpireAfter
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model.head import Expiry
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.ports import EventualReader
from kjournal.ports import ReplicatedStore
from kjournal.replicate import ReplicationResult
from kjournal.replicate import replicate_partition
from kjournal.testing.records import KEY
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import at
from kjournal.testing.records import broken
from kjournal.testing.records import delete_record
from kjournal.testing.records import mark_record
from kjournal.testing.records import purge_record
from kjournal.testing.records import timestamp_of
from kjournal.wire.record import ConsumedRecord

T = TypeVar("T")

KEY1 = Key(TOPIC, "id1")
KEY2 = Key(TOPIC, "id2")


@dataclass(frozen=True)
class StoredRow:
    """A `journal` row as the backend holds it (deleted-by-head or not)."""

    segment: int
    seq_nr: int
    position: PartitionOffset
    meta_record_id: uuid.UUID | None


@dataclass(frozen=True)
class StoredHead:
    """A `metajournal` row, with what the port does not show; `written` is whatever proves a
    rewrite (Cassandra's WRITETIME, the in-memory row's identity)."""

    head: JournalHead
    created: datetime
    updated: datetime
    origin: str | None
    written: object


@dataclass(frozen=True)
class StoredPointer:
    offset: int
    created: datetime | None
    updated: datetime


class EventualBackend(Protocol):
    def store(self, segment_size: int = 10_000) -> ReplicatedStore:
        """A replicated store over the backend's (shared) tables."""
        ...

    async def reader(self) -> EventualReader:
        """The read side over the same tables."""
        ...

    def rows(self, key: Key) -> list[StoredRow]:
        """Every `journal` row of the journal, by seqNr."""
        ...

    def head(self, key: Key) -> StoredHead | None: ...

    def pointer(self, topic: str, partition: int) -> StoredPointer | None: ...

    def quarantined(self, key: Key) -> list[QuarantinedRecord]: ...

    def seed_head(self, key: Key, head: JournalHead, created: datetime) -> None:
        """A head as if replicated earlier (by either implementation)."""
        ...

    def seed_row(
        self, key: Key, segment: int, seq_nr: int, offset: int = 0, timestamp: datetime = T0
    ) -> None:
        """A `journal` row written outside the store: a crashed replication's leftover, or a
        copy kafka-journal's replicator stores for a resent append."""
        ...


def replicate(
    store: ReplicatedStore, records: Sequence[ConsumedRecord], now: datetime = T0
) -> ReplicationResult:
    return replicate_partition(TOPIC, 0, records, store, now)


def read(backend: EventualBackend, key: Key = KEY, from_: int = 1) -> list[EventRecord]:
    """What the eventual reader returns for the journal (nothing without a head)."""

    async def run() -> list[EventRecord]:
        reader = await backend.reader()
        head = await reader.head(key)
        if head is None:
            return []
        return [record async for record in reader.events(key, head, SeqNr(from_))]

    return asyncio.run(run())


def ask(backend: EventualBackend, question: Callable[[EventualReader], Awaitable[T]]) -> T:
    """One answer of the backend's eventual reader."""

    async def run() -> T:
        return await question(await backend.reader())

    return asyncio.run(run())


def seq_nrs(backend: EventualBackend, key: Key = KEY) -> list[int]:
    return [record.seq_nr for record in read(backend, key)]


def stored_seq_nrs(backend: EventualBackend, key: Key = KEY) -> list[int]:
    return [row.seq_nr for row in backend.rows(key)]


def the_head(backend: EventualBackend, key: Key = KEY) -> StoredHead:
    head = backend.head(key)
    assert head is not None, f"no head for {key}"
    return head


SEGMENT_SIZES = (2, 10_000)


class EventualStoreContract:
    """Every scenario here runs against each backend; see the module docstring."""

    # Appends

    def test_append(self, backend: EventualBackend) -> None:
        for segment_size in SEGMENT_SIZES:
            key, other = Key(TOPIC, f"a{segment_size}"), Key(TOPIC, f"b{segment_size}")
            store = backend.store(segment_size)
            base = 10 * segment_size
            replicate(
                store, [append_record(base, [1], key), append_record(base + 1, [2, 3], other)]
            )
            later = T0 + timedelta(minutes=1)
            result = replicate(store, [append_record(base + 2, [2, 3], key)], now=later)
            assert result.events == 2

            rows = backend.rows(key)
            assert [(r.segment, r.seq_nr, r.position.offset) for r in rows] == [
                ((n - 1) // segment_size, n, base + offset)
                for n, offset in [(1, 0), (2, 2), (3, 2)]
            ]
            stored = the_head(backend, key)
            assert stored.head.partition_offset == at(base + 2)
            assert (stored.head.segment_size, stored.head.seq_nr) == (segment_size, 3)
            assert stored.head.delete_to is None
            assert (stored.created, stored.updated, stored.origin) == (T0, later, "origin")
            assert {row.meta_record_id for row in rows} == {stored.head.record_id}
            assert stored.head.record_id is not None

            events = read(backend, key)
            assert [e.seq_nr for e in events] == [1, 2, 3]
            second = events[1]
            assert second.partition_offset == at(base + 2)
            assert second.timestamp == timestamp_of(base + 2)
            assert (second.origin, second.version, dict(second.headers)) == (
                "origin",
                "test",
                {"h": "v"},
            )
            assert second.event.tags == {"tag"}
            assert second.event.payload is not None
            assert second.event.payload.value == {"n": 2}
            assert seq_nrs(backend, other) == [2, 3]

    def test_appends_of_several_journals_across_slices(self, backend: EventualBackend) -> None:
        store = backend.store()
        first = replicate(
            store,
            [
                append_record(0, [1], KEY1),
                append_record(1, [1, 2], KEY2),
                append_record(2, [2, 3], KEY1),
            ],
        )
        replicate(store, [append_record(3, [3], KEY2), append_record(4, [4, 5], KEY1)])
        assert (first.records, first.journals, first.events, first.batches) == (3, 2, 5, 2)
        assert seq_nrs(backend, KEY1) == [1, 2, 3, 4, 5]
        assert seq_nrs(backend, KEY2) == [1, 2, 3]
        assert store.pointer2(TOPIC, 0) == 4
        assert the_head(backend, KEY1).head.partition_offset == at(4)

    def test_expire_after_set_updated_and_removed(self, backend: EventualBackend) -> None:
        store = backend.store()
        hour, day = ExpireAfter.of(1, "hour"), ExpireAfter.of(1, "day")
        late = T0.replace(hour=23, minute=30)
        replicate(store, [append_record(0, [1], expire_after=hour)], now=late)
        first = the_head(backend)
        assert first.head.expiry == Expiry(hour, date(2019, 12, 13))  # in UTC

        replicate(store, [append_record(1, [2], expire_after=hour)], now=late)
        again = the_head(backend)
        assert again.head.expiry == Expiry(hour, date(2019, 12, 13))
        assert again.written != first.written  # the head moved on

        replicate(store, [append_record(2, [3], expire_after=day)], now=T0)
        assert the_head(backend).head.expiry == Expiry(day, date(2019, 12, 13))

        replicate(store, [append_record(3, [4])], now=T0)
        last = the_head(backend).head
        assert (last.expiry, last.seq_nr) == (None, 4)

    def test_seq_nr_gaps_at_segment_boundaries(self, backend: EventualBackend) -> None:
        store = backend.store(segment_size=2)
        far = 3 * 2 + 1  # the first seqNr of segment 3: segments 1 and 2 stay empty
        replicate(store, [append_record(0, [1, 2]), append_record(1, [far, far + 1])])
        assert stored_seq_nrs(backend) == [1, 2, far, far + 1]
        assert seq_nrs(backend) == [1, 2, far, far + 1]
        replicate(store, [delete_record(2, far)])
        assert stored_seq_nrs(backend) == [far + 1]
        assert seq_nrs(backend) == [far + 1]

    def test_record_id_is_set_once(self, backend: EventualBackend) -> None:
        store = backend.store()
        replicate(store, [append_record(0, [1])])
        record_id = the_head(backend).head.record_id
        assert isinstance(record_id, uuid.UUID)
        replicate(store, [append_record(1, [2]), delete_record(2, 1), append_record(3, [3])])
        assert the_head(backend).head.record_id == record_id
        assert {row.meta_record_id for row in backend.rows(KEY)} == {record_id}

    # Idempotency

    def test_a_replayed_slice_rewrites_nothing(self, backend: EventualBackend) -> None:
        store = backend.store()
        records = [append_record(0, [1, 2]), append_record(1, [3]), delete_record(2, 1)]
        replicate(store, records)
        head, rows = backend.head(KEY), backend.rows(KEY)
        store.set_pointer2(TOPIC, 0, 0, T0, insert=False)  # as if the pointer update was lost
        result = replicate(store, [*records, mark_record(3)], now=T0 + timedelta(hours=1))
        assert (result.batches, result.events, result.pointer2) == (0, 0, 3)
        assert backend.head(KEY) == head  # `written` included: not even rewritten
        assert backend.rows(KEY) == rows

    def test_records_at_or_below_pointer2_are_skipped(self, backend: EventualBackend) -> None:
        store = backend.store()
        store.set_pointer2(TOPIC, 0, 1, T0, insert=True)
        result = replicate(
            store, [append_record(0, [1]), append_record(1, [2]), append_record(2, [3])]
        )
        assert result.records == 1
        assert stored_seq_nrs(backend) == [3]
        assert the_head(backend).head.delete_to == 2  # the journal as this replicator saw it

    # Deletes

    def test_delete(self, backend: EventualBackend) -> None:
        for segment_size in SEGMENT_SIZES:
            key, base = Key(TOPIC, f"d{segment_size}"), 10 * segment_size
            store = backend.store(segment_size)
            replicate(store, [append_record(base, [1, 2, 3, 4, 5], key)])
            replicate(store, [delete_record(base + 1, 3, key)], now=T0 + timedelta(minutes=1))
            assert stored_seq_nrs(backend, key) == [4, 5]
            head = the_head(backend, key).head
            assert (head.partition_offset, head.seq_nr, head.delete_to) == (at(base + 1), 5, 3)
            assert seq_nrs(backend, key) == [4, 5]

            replicate(store, [delete_record(base + 2, 2**63 - 1, key)])
            assert stored_seq_nrs(backend, key) == []
            head = the_head(backend, key).head
            assert (head.partition_offset, head.seq_nr, head.delete_to) == (at(base + 2), 5, 5)
            assert seq_nrs(backend, key) == []

    def test_appends_and_deletes_in_one_slice_or_many(self, backend: EventualBackend) -> None:
        def history(key: Key, base: int) -> list[ConsumedRecord]:
            return [
                append_record(base, [1, 2], key),
                append_record(base + 1, [3], key),
                delete_record(base + 2, 2, key),
                append_record(base + 3, [4], key),
                delete_record(base + 4, 3, key),
                append_record(base + 5, [5], key),
            ]

        replicate(backend.store(), history(KEY, 0))
        store = backend.store(segment_size=2)
        for record in history(KEY1, 10):
            replicate(store, [record])
        for key, last in ((KEY, 5), (KEY1, 15)):
            assert stored_seq_nrs(backend, key) == [4, 5]
            assert seq_nrs(backend, key) == [4, 5]
            head = the_head(backend, key).head
            assert (head.partition_offset, head.seq_nr, head.delete_to) == (at(last), 5, 3)

    def test_delete_without_head_is_ignored(self, backend: EventualBackend) -> None:
        store = backend.store()
        replicate(store, [delete_record(4, 7)])
        assert backend.head(KEY) is None
        assert store.pointer2(TOPIC, 0) == 4
        replicate(store, [append_record(5, [1, 2])])  # a later journal is not hidden by it
        assert seq_nrs(backend) == [1, 2]

    def test_batched_appends_then_delete_keep_metajournal_right(
        self, backend: EventualBackend
    ) -> None:
        # kafka-journal PR #676: a head at seqNr 574 (delete_to 544); the slice appends 574
        # again, 575, then deletes 575: metajournal must end at 575 with delete_to 575.
        record_id = uuid.uuid4()
        backend.seed_head(
            KEY, JournalHead(at(1797078), 10_000, SeqNr(574), SeqNr(544), None, record_id), T0
        )
        backend.seed_row(KEY, 0, 574)
        store = backend.store()
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
        head = the_head(backend).head
        assert (head.partition_offset, head.seq_nr, head.delete_to) == (at(1801642), 575, 575)
        assert backend.rows(KEY) == []

    # Purges

    def test_purge(self, backend: EventualBackend) -> None:
        for segment_size in SEGMENT_SIZES:
            key, base = Key(TOPIC, f"p{segment_size}"), 10 * segment_size
            store = backend.store(segment_size)
            replicate(store, [append_record(base, [1, 2, 3], key)])
            first_id = the_head(backend, key).head.record_id
            replicate(store, [purge_record(base + 1, key)])
            assert backend.head(key) is None
            assert backend.rows(key) == []
            replicate(store, [append_record(base + 2, [1], key)])
            assert the_head(backend, key).head.record_id not in (None, first_id)
            assert [r.position for r in backend.rows(key)] == [at(base + 2)]
            assert seq_nrs(backend, key) == [1]

    def test_purge_without_head_is_ignored(self, backend: EventualBackend) -> None:
        store = backend.store()
        result = replicate(store, [purge_record(0)])
        assert result.batches == 0
        assert backend.head(KEY) is None
        pointer = backend.pointer(TOPIC, 0)
        assert pointer is not None
        assert pointer.offset == 0

    def test_purge_clears_neighbouring_segments(self, backend: EventualBackend) -> None:
        store = backend.store(segment_size=2)
        replicate(store, [append_record(0, [1, 2, 3, 4, 5, 6]), delete_record(1, 4)])
        # Leftovers a crashed replication may leave around the live range (docs/replication.md).
        backend.seed_row(KEY, 1, 3)
        backend.seed_row(KEY, 3, 7)
        replicate(store, [purge_record(2)])
        assert backend.rows(KEY) == []
        assert backend.head(KEY) is None

    # pointer2

    def test_mark_only_slices_advance_pointer2(self, backend: EventualBackend) -> None:
        store = backend.store()
        result = replicate(store, [mark_record(0), mark_record(1, KEY1)])
        assert (result.pointer2_before, result.pointer2) == (None, 1)
        assert backend.head(KEY) is None
        assert backend.pointer(TOPIC, 0) == StoredPointer(1, T0, T0)
        later = T0 + timedelta(seconds=5)
        replicate(store, [mark_record(2)], now=later)
        assert backend.pointer(TOPIC, 0) == StoredPointer(2, T0, later)
        assert store.pointer2(TOPIC, 0) == 2
        assert ask(backend, lambda reader: reader.pointer2(TOPIC, 0)) == 2
        assert ask(backend, lambda reader: reader.pointer2(TOPIC, 1)) is None

    # Quarantine

    def test_poison_record_is_quarantined_and_everything_else_replicated(
        self, backend: EventualBackend
    ) -> None:
        store = backend.store()
        poison = broken(append_record(1, [2]), header=b"\x00not json")
        replicate(
            store,
            [
                append_record(0, [1]),
                poison,
                append_record(2, [1], KEY1),
                append_record(3, [3]),
                broken(append_record(4, [1], KEY2), value=b"\x01\x02"),
                append_record(5, [2], KEY1),
            ],
        )
        assert stored_seq_nrs(backend) == [1]
        assert seq_nrs(backend, KEY1) == [1, 2]
        assert store.pointer2(TOPIC, 0) == 5
        first, parked = backend.quarantined(KEY)
        assert (first.partition, first.offset, first.header, first.value) == (
            0,
            1,
            b"\x00not json",
            poison.value,
        )
        assert first.reason.startswith("header:")
        assert first.timestamp == timestamp_of(1)
        assert parked.offset == 3
        assert parked.reason == "parked: behind the quarantined record at offset 1"
        (bad_payload,) = backend.quarantined(KEY2)
        assert bad_payload.reason.startswith("payload:")
        assert store.quarantined_from(TOPIC, 0, ["id", "id1", "id2"]) == {"id": 1, "id2": 4}
        assert store.quarantined_from(TOPIC, 1, ["id"]) == {"id": -1}
        flag = ask(backend, lambda reader: reader.quarantined(KEY))
        assert flag is not None
        assert flag.offset == 1
        assert ask(backend, lambda reader: reader.quarantined(KEY1)) is None

        replicate(store, [append_record(6, [4])])  # later slices keep it quarantined
        assert stored_seq_nrs(backend) == [1]
        assert [q.offset for q in backend.quarantined(KEY)] == [1, 3, 6]

    # Duplicates (docs/replication.md §4)

    def test_a_resent_append_changes_nothing(self, backend: EventualBackend) -> None:
        store = backend.store()
        result = replicate(
            store, [append_record(0, [1]), append_record(1, [2]), append_record(2, [2])]
        )
        assert (result.duplicates, result.conflicts) == (1, 0)
        assert [(r.seq_nr, r.position) for r in backend.rows(KEY)] == [(1, at(0)), (2, at(1))]
        assert the_head(backend).head.seq_nr == 2
        assert ask(backend, lambda reader: reader.conflicts(KEY, 10)) == []

    def test_an_overlapping_append_is_dropped_whole_and_the_seq_nr_never_goes_back(
        self, backend: EventualBackend
    ) -> None:
        store = backend.store(segment_size=2)
        replicate(store, [append_record(0, [1, 2, 3])])
        result = replicate(store, [append_record(1, [2, 3, 4]), append_record(2, [1])])
        assert (result.dropped, result.duplicates) == (2, 4)
        assert [(r.seq_nr, r.position) for r in backend.rows(KEY)] == [
            (1, at(0)),
            (2, at(0)),
            (3, at(0)),
        ]
        assert the_head(backend).head.seq_nr == 3
        assert seq_nrs(backend) == [1, 2, 3]

    def test_a_conflicting_append_is_recorded_and_kept_out(self, backend: EventualBackend) -> None:
        store = backend.store()
        later = T0 + timedelta(minutes=1)
        replicate(store, [append_record(0, [1, 2])])
        # a conflict against a stored event, then one against an event of the same slice
        result = replicate(
            store,
            [
                append_record(1, [3], variant=1),
                append_record(2, [2, 3], variant=1),
                append_record(3, [3], variant=2),
            ],
            now=later,
        )
        assert (result.dropped, result.conflicts, result.refused) == (2, 2, 0)
        events = read(backend)
        assert [(e.seq_nr, e.partition_offset) for e in events] == [
            (1, at(0)),
            (2, at(0)),
            (3, at(1)),
        ]
        assert events[1].event.payload is not None
        assert events[1].event.payload.value == {"n": 2}
        conflicts = ask(backend, lambda reader: reader.conflicts(KEY, 10))
        assert conflicts is not None
        assert [(c.seq_nr, c.dropped, c.kept, c.detected_at) for c in conflicts] == [
            (2, at(2), at(0), later),
            (3, at(2), at(1), later),
            (3, at(3), at(1), later),
        ]
        replicate(store, [append_record(2, [2, 3], variant=1)])  # a replay records nothing new
        assert len(ask(backend, lambda reader: reader.conflicts(KEY, 10)) or []) == 3

    def test_an_identical_retry_is_a_replay_and_a_failed_condition_a_refusal(
        self, backend: EventualBackend
    ) -> None:
        store = backend.store()
        replicate(store, [append_record(0, [1, 2])])
        result = replicate(
            store,
            [
                append_record(1, [1, 2]),  # the same events again: a replay
                append_record(2, [3], expect=1),  # the journal is at 2: refused
                append_record(3, [3], variant=1, expect=2),  # taken
                append_record(4, [1], variant=1, expect=0),  # the journal exists: refused
            ],
        )
        assert (result.dropped, result.conflicts, result.refused) == (3, 0, 2)
        assert [(e.seq_nr, e.partition_offset) for e in read(backend)] == [
            (1, at(0)),
            (2, at(0)),
            (3, at(3)),
        ]
        assert ask(backend, lambda reader: reader.conflicts(KEY, 10)) == []

    def test_late_lower_seq_nrs_are_dropped(self, backend: EventualBackend) -> None:
        store = backend.store()
        replicate(store, [append_record(0, [1501, 1502]), append_record(1, [1, 2])])
        head = the_head(backend).head
        assert (head.seq_nr, head.delete_to) == (1502, 1500)
        assert stored_seq_nrs(backend) == [1501, 1502]

    def test_a_seq_nr_stored_twice_reads_once_the_first_by_offset(
        self, backend: EventualBackend
    ) -> None:
        # Rows as kafka-journal's replicator leaves resent appends: two copies of seqNrs 2 and 3.
        # Copies cluster by timestamp; the read picks by offset, whichever comes first.
        backend.seed_head(KEY, JournalHead(at(9), 10_000, SeqNr(3)), T0)
        backend.seed_row(KEY, 0, 1, offset=1, timestamp=T0)
        backend.seed_row(KEY, 0, 2, offset=7, timestamp=T0 + timedelta(seconds=1))
        backend.seed_row(KEY, 0, 2, offset=2, timestamp=T0 + timedelta(seconds=2))
        backend.seed_row(KEY, 0, 3, offset=3, timestamp=T0 + timedelta(seconds=3))
        backend.seed_row(KEY, 0, 3, offset=8, timestamp=T0 + timedelta(seconds=4))
        events = read(backend)
        assert [(e.seq_nr, e.partition_offset.offset) for e in events] == [(1, 1), (2, 2), (3, 3)]

    # Reading

    def test_reads_start_at_from_and_after_delete_to(self, backend: EventualBackend) -> None:
        store = backend.store(segment_size=2)
        replicate(store, [append_record(0, [1, 2, 3, 4, 5]), delete_record(1, 2)])
        for from_ in range(1, 7):
            expected = [n for n in (3, 4, 5) if n >= from_]
            assert [e.seq_nr for e in read(backend, KEY, from_)] == expected, from_

    def test_ids_lists_each_journal_with_a_head_once(self, backend: EventualBackend) -> None:
        store = backend.store()
        replicate(
            store,
            [append_record(0, [1], KEY), append_record(1, [1], KEY1), append_record(2, [1], KEY2)],
        )
        replicate(store, [purge_record(3, KEY2)])

        async def ids(reader: EventualReader) -> list[str]:
            return [id_ async for id_ in reader.ids(TOPIC)]

        assert sorted(ask(backend, ids)) == ["id", "id1"]
