"""Model-based tests of replication: folded, batched, sliced, crashed and replayed application must
end where applying every action one by one to a naive model ends.

The model is the journal as clients see it: appends add events, a delete hides events up to
min(to, seqNr) and never un-hides, a purge erases, marks do nothing; a record with an undecodable
header quarantines its journal from that record on. Generated clients behave like real ones:
seqNrs increase (with gaps), deletes only target existing journals (`to` may exceed the seqNr),
a new incarnation after a purge starts anywhere.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.fold.plan import Write
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import ExpireAfter
from kjournal.model import Key
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.replicate import replicate_partition
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import broken
from kjournal.testing.records import delete_record
from kjournal.testing.records import mark_record
from kjournal.testing.records import purge_record
from kjournal.testing.records import timestamp_of
from kjournal.wire.record import ConsumedRecord

KEYS = [Key(TOPIC, f"id{n}") for n in range(3)]
EXPIRIES = [None, ExpireAfter.of(1, "hour"), ExpireAfter.of(1, "day")]


class Crash(Exception):
    pass


# The naive model


@dataclass
class ModelJournal:
    exists: bool = False
    events: dict[int, int] = field(default_factory=dict)  # seqNr → offset of its record
    seq_nr: int = 0
    delete_to: int = 0
    offset: int = -1  # of the last append or delete
    expire_after: ExpireAfter | None = None
    quarantined: list[int] = field(default_factory=list)  # offsets kept in quarantine

    def visible(self) -> list[tuple[int, int]]:
        return sorted((n, o) for n, o in self.events.items() if n > self.delete_to)


@dataclass
class Scenario:
    records: list[ConsumedRecord]
    model: dict[Key, ModelJournal]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    keys = KEYS[: draw(st.integers(1, 3))]
    model = {key: ModelJournal() for key in keys}
    last = dict.fromkeys(keys, 0)  # highest seqNr or deleteTo a client of the journal has used
    records: list[ConsumedRecord] = []
    for offset in range(draw(st.integers(0, 14))):
        key = draw(st.sampled_from(keys))
        journal = model[key]
        kinds = ["append", "append", "mark", "purge", "poison"]
        if journal.exists:
            kinds += ["delete", "delete"]
        kind = draw(st.sampled_from(kinds))
        if journal.quarantined:
            records.append(_record(draw, kind, offset, key, last))
            if kind != "mark":
                journal.quarantined.append(offset)
            continue
        if kind == "append":
            first = last[key] + 1 + draw(st.sampled_from([0, 0, 1, 3]))
            seq_nrs = [first]
            for _ in range(draw(st.integers(0, 2))):
                seq_nrs.append(seq_nrs[-1] + 1 + draw(st.sampled_from([0, 0, 2])))
            expire_after = draw(st.sampled_from(EXPIRIES))
            records.append(append_record(offset, seq_nrs, key, expire_after))
            if not journal.exists:
                journal.exists = True
                journal.delete_to = seq_nrs[0] - 1
            journal.events.update(dict.fromkeys(seq_nrs, offset))
            journal.seq_nr = seq_nrs[-1]
            journal.offset = offset
            journal.expire_after = expire_after
            last[key] = seq_nrs[-1]
        elif kind == "delete":
            to = draw(st.integers(1, last[key] + 3))
            records.append(delete_record(offset, to, key))
            journal.seq_nr = max(journal.seq_nr, journal.delete_to)
            journal.delete_to = max(journal.delete_to, min(to, journal.seq_nr))
            journal.offset = offset
            last[key] = max(last[key], to)
        elif kind == "purge":
            records.append(purge_record(offset, key))
            if journal.exists:
                model[key] = ModelJournal()
                last[key] = 0
        elif kind == "mark":
            records.append(mark_record(offset, key))
        else:
            records.append(_record(draw, "poison", offset, key, last))
            journal.quarantined.append(offset)
    return Scenario(records, model)


def _record(
    draw: st.DrawFn, kind: str, offset: int, key: Key, last: dict[Key, int]
) -> ConsumedRecord:
    """A record of a journal whose actions no longer reach the store."""
    if kind == "poison":
        return broken(append_record(offset, [last[key] + 1], key), header=b"{broken")
    if kind == "mark":
        return mark_record(offset, key)
    if kind == "purge":
        return purge_record(offset, key)
    if kind == "delete":
        return delete_record(offset, max(last[key], 1), key)
    return append_record(offset, [last[key] + 1], key)


# Running the replicator


class CrashingStore(InMemoryReplicatedStore):
    """Dies (for good) before its `crash_at`-th write, quarantine and pointer2 writes included."""

    def __init__(self, crash_at: int | None = None, segment_size: int = 2) -> None:
        super().__init__(segment_size=segment_size, on_write=self._count)
        self.crash_at = crash_at
        self.writes = 0

    def _count(self, _: Write | None = None) -> None:
        self.writes += 1
        if self.crash_at is not None and self.writes >= self.crash_at:
            raise Crash

    def set_pointer2(
        self, topic: str, partition: int, offset: int, now: datetime, *, insert: bool
    ) -> None:
        self._count()
        super().set_pointer2(topic, partition, offset, now, insert=insert)

    def quarantine(self, records: Sequence[QuarantinedRecord]) -> None:
        for record in records:
            self._count()
            super().quarantine([record])


def run(
    store: InMemoryReplicatedStore, records: Sequence[ConsumedRecord], cuts: Sequence[int]
) -> None:
    """Replicate `records` in slices ending before each cut, with a later time per slice."""
    bounds = [0, *sorted(set(cuts)), len(records)]
    for n, (start, end) in enumerate(itertools.pairwise(bounds)):
        if start < end:
            now = T0 + timedelta(seconds=n)
            replicate_partition(TOPIC, 0, records[start:end], store, now)


def snapshot(store: InMemoryReplicatedStore) -> Any:
    quarantine = {
        key: [(q.offset, q.reason, q.header, q.value) for q in store.quarantined(TOPIC, key.id)]
        for key in KEYS
    }
    return (
        {key: (store.head_row(key), store.rows(key)) for key in KEYS},
        store.pointer_row(TOPIC, 0),
        quarantine,
    )


def check(store: InMemoryReplicatedStore, scenario: Scenario) -> None:
    if scenario.records:
        assert store.pointer2(TOPIC, 0) == scenario.records[-1].offset
    for key, journal in scenario.model.items():
        head = store.head(key)
        assert [q.offset for q in store.quarantined(TOPIC, key.id)] == journal.quarantined
        assert (head is not None) == journal.exists, key
        rows = store.rows(key)
        if head is None:
            assert rows == [], f"orphan rows of {key}"
            continue
        assert head.seq_nr == journal.seq_nr
        assert (head.delete_to or 0) == journal.delete_to
        assert head.partition_offset.offset == journal.offset
        assert (head.expiry.after if head.expiry else None) == journal.expire_after
        visible = [(e.seq_nr, e.partition_offset.offset) for e in store.events(key)]
        assert visible == journal.visible()
        for event in store.events(key):
            assert event.timestamp == timestamp_of(event.partition_offset.offset)
            assert event.event.payload is not None
        assert all(row.event.seq_nr > journal.delete_to for row in rows), f"hidden rows of {key}"
        assert {row.meta_record_id for row in rows} <= {head.record_id}


cuts_strategy = st.lists(st.integers(0, 14), max_size=5)
common = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=300)


@common
@given(scenarios(), cuts_strategy)
def test_folded_batches_equal_the_naive_model(scenario: Scenario, cuts: list[int]) -> None:
    store = InMemoryReplicatedStore(segment_size=2)
    run(store, scenario.records, cuts)
    check(store, scenario)


@common
@given(scenarios(), st.sampled_from([2, 3, 10_000]))
def test_one_slice_equals_one_record_per_slice(scenario: Scenario, segment_size: int) -> None:
    whole = InMemoryReplicatedStore(segment_size=segment_size)
    run(whole, scenario.records, [])
    single = InMemoryReplicatedStore(segment_size=segment_size)
    run(single, scenario.records, list(range(len(scenario.records))))
    check(whole, scenario)
    check(single, scenario)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150)
@given(scenarios(), cuts_strategy, cuts_strategy)
def test_a_crash_anywhere_then_a_replay_ends_the_same(
    scenario: Scenario, cuts: list[int], replay_cuts: list[int]
) -> None:
    dry_run = CrashingStore()
    run(dry_run, scenario.records, cuts)
    for crash_at in range(1, dry_run.writes + 1):  # every write, pointer2 updates included
        store = CrashingStore(crash_at)
        with contextlib.suppress(Crash):
            run(store, scenario.records, cuts)
        store.crash_at = None
        replayed = store.pointer2(TOPIC, 0)
        remaining = [r for r in scenario.records if replayed is None or r.offset > replayed]
        run(store, remaining, replay_cuts)
        check(store, scenario)


@common
@given(scenarios(), cuts_strategy, st.integers(-1, 14))
def test_applying_a_suffix_twice_changes_nothing(
    scenario: Scenario, cuts: list[int], rewind_to: int
) -> None:
    store = InMemoryReplicatedStore(segment_size=2)
    run(store, scenario.records, cuts)
    before = snapshot(store)
    pointer = store.pointer_row(TOPIC, 0)
    if pointer is None or rewind_to >= pointer.offset:
        return
    # pointer2 lost its last updates: the records after rewind_to come again, later.
    store.set_pointer2(TOPIC, 0, rewind_to, T0, insert=False)
    again = [r for r in scenario.records if r.offset > rewind_to]
    replicate_partition(TOPIC, 0, again, store, T0 + timedelta(days=3))
    after = snapshot(store)
    assert after[0] == before[0]
    assert after[2] == before[2]
    assert after[1] is not None
    assert after[1].offset == pointer.offset
