"""The check over the in-memory store: a replicated partition checks clean; each kind of damage
done to the store is found and named; the repair's steps make it clean again, run twice they
change nothing more."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta

import pytest
from kjournal.check.findings import Kind
from kjournal.check.findings import PartitionResult
from kjournal.check.findings import Unchecked
from kjournal.check.findings import seq_ranges
from kjournal.check.fold import FoldedPartition
from kjournal.check.fold import fold_partition
from kjournal.check.partition import check_partition
from kjournal.check.repair import repair_steps
from kjournal.check.state import StoredHeads
from kjournal.check.state import StoredJournal
from kjournal.check.state import expected_of
from kjournal.fold.plan import DeleteHead
from kjournal.fold.plan import DeleteRows
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import UpdateHead
from kjournal.memory import InMemoryReplicatedStore
from kjournal.memory import StoredRow
from kjournal.model import Event
from kjournal.model import ExpireAfter
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.replicate import replicate_partition
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import delete_record
from kjournal.testing.records import purge_record
from kjournal.wire.record import ConsumedRecord

DAY = ExpireAfter(86_400 * 10**9)
SIZE = 4  # a small segment size, so that journals span segments


def key(id: str) -> Key:
    return Key(TOPIC, id)


class Snapshot:
    """The check's StoreSnapshot over an in-memory store (one bucket per journal)."""

    def __init__(self, store: InMemoryReplicatedStore) -> None:
        self.store = store

    def pointer2(self, topic: str, partition: int) -> int | None:
        return self.store.pointer2(topic, partition)

    def stored_heads(self, keys: Sequence[Key]) -> list[StoredHeads]:
        return [
            StoredHeads(head, (0,) if head is not None else ())
            for head in self.store.heads(list(keys))
        ]

    def rows_of(self, wanted: Sequence[tuple[Key, Sequence[int]]]) -> list[list[StoredRow]]:
        return [
            [row for row in self.store.rows(k) if row.segment in set(segments)]
            for k, segments in wanted
        ]


def ids_of(store: InMemoryReplicatedStore) -> set[str]:
    return {k.id for k in store.keys()}  # noqa: SIM118 (the store's own method)


def history() -> list[ConsumedRecord]:
    records: list[ConsumedRecord] = []

    def add(make, *args, **kwargs) -> None:
        records.append(make(len(records), *args, **kwargs))

    add(append_record, [1, 2, 3], key("a"))
    add(append_record, [1, 2], key("b"), expire_after=DAY)
    add(append_record, [4, 5, 6], key("a"))
    add(append_record, [5, 6], key("a"), variant=1)  # a conflict: dropped
    add(delete_record, 2, key("a"))
    add(append_record, [1], key("gone"))
    add(purge_record, key("gone"))
    add(append_record, [7, 8, 9, 10], key("a"))
    add(append_record, [3], key("b"), expire_after=DAY)
    return records


def replicated() -> tuple[list[ConsumedRecord], InMemoryReplicatedStore]:
    records = history()
    store = InMemoryReplicatedStore(segment_size=SIZE)
    replicate_partition(TOPIC, 0, records[:4], store, T0)
    replicate_partition(TOPIC, 0, records[4:], store, T0 + timedelta(hours=1))
    return records, store


def folded_and_checked(
    records: list[ConsumedRecord], store: InMemoryReplicatedStore
) -> tuple[FoldedPartition, PartitionResult]:
    """The whole partition folded, and the store checked against it, two hours after T0."""
    now = T0 + timedelta(hours=2)
    folded = fold_partition(
        TOPIC, 0, records, beginning=0, end=len(records), now=now, segment_size=SIZE
    )
    return folded, check_partition(folded, Snapshot(store), ids_of(store), now=now)


def check(records: list[ConsumedRecord], store: InMemoryReplicatedStore) -> PartitionResult:
    return folded_and_checked(records, store)[1]


def kinds(result: PartitionResult) -> dict[str, set[Kind]]:
    return {r.key.id: {f.kind for f in r.findings} for r in result.results if r.findings}


def repair(
    records: list[ConsumedRecord], store: InMemoryReplicatedStore, strict: bool = False
) -> int:
    folded, result = folded_and_checked(records, store)
    writes = 0
    for journal in result.results:
        stored_head = store.head(journal.key)
        stored = StoredJournal(
            StoredHeads(stored_head, (0,) if stored_head else ()), store.rows(journal.key)
        )
        steps = repair_steps(
            expected_of(folded, journal.key),
            stored,
            journal.findings,
            T0 + timedelta(hours=3),
            segment_size=SIZE,
            strict=strict,
        )
        store.write([(journal.key, steps)])
        writes += sum(len(step) for step in steps)
    return writes


def test_a_replicated_partition_checks_clean() -> None:
    records, store = replicated()
    result = check(records, store)
    assert result.results == []
    assert result.findings == []
    assert result.journals == 3  # a, b and the purged journal
    assert result.events == len(store.events(key("a"))) + len(store.events(key("b")))


def test_each_damage_is_found_named_and_repaired() -> None:
    records, store = replicated()
    a_rows = store.rows(key("a"))
    # delete event rows: a's last segment (seqNrs 9, 10)
    store.write([(key("a"), [(DeleteRows(2),)])])
    # change a payload: b's seqNr 3
    b3 = next(row for row in store.rows(key("b")) if row.event.seq_nr == 3)
    changed = replace(b3.event, event=Event(SeqNr(3), b3.event.event.tags, JsonPayload({"n": 99})))
    store.write([(key("b"), [(InsertRows(b3.segment, (changed,), b3.meta_record_id),)])])
    # insert the events of the dropped append (offset 3, seqNrs 5, 6 of another content)
    dropped = fold_partition(
        TOPIC, 0, [records[3]], beginning=0, end=4, now=T0, segment_size=SIZE
    ).store.rows(key("a"))
    assert {row.event.partition_offset.offset for row in dropped} == {3}
    store.write([(key("a"), [(InsertRows(1, tuple(r.event for r in dropped), None),)])])
    # move deleteTo, and the purged journal's head back (a purge not applied)
    store.write([(key("a"), [(UpdateHead(PartitionOffset(0, 7), T0, delete_to=SeqNr(4)),)])])
    gone = store.heads([key("b")])[0]
    assert gone is not None
    store.seed_head(key("gone"), replace(gone, expiry=None), T0, None)
    # move pointer2 back
    store.set_pointer2(TOPIC, 0, 2, T0, insert=False)

    result = check(records, store)
    assert kinds(result) == {
        "a": {Kind.EVENTS_MISSING, Kind.EVENTS_DROPPED, Kind.HEAD_DELETE_TO},
        "b": {Kind.EVENTS_CHANGED},
        "gone": {Kind.HEAD_UNEXPECTED},
    }
    assert [f.kind for f in result.findings] == [Kind.POINTER2_BEHIND]
    texts = {f.kind: f.detail for r in result.results for f in r.findings}
    assert "seqNrs 9..10" in texts[Kind.EVENTS_MISSING]
    assert "offset 3" in texts[Kind.EVENTS_DROPPED]
    assert "payload" in texts[Kind.EVENTS_CHANGED]
    assert "purged at offset 6" in texts[Kind.HEAD_UNEXPECTED]

    assert repair(records, store) > 0
    after = check(records, store)
    assert after.results == []
    assert store.rows(key("a")) == a_rows
    assert repair(records, store) == 0  # idempotent


def test_a_dropped_head_is_put_back_with_the_rows_record_id() -> None:
    records, store = replicated()
    before = store.head(key("a"))
    assert before is not None
    store.write([(key("a"), [(DeleteHead(),)])])
    assert kinds(check(records, store)) == {"a": {Kind.HEAD_MISSING}}
    repair(records, store)
    after = store.head(key("a"))
    assert after is not None
    assert after.record_id == before.record_id
    assert replace(after, expiry=None) == replace(before, expiry=None)
    assert check(records, store).results == []


def test_a_removed_delete_to_and_a_changed_expiry_are_repaired() -> None:
    records, store = replicated()
    b = store.head(key("b"))
    assert b is not None
    assert b.expiry is not None
    store.write(
        [
            (key("a"), [(UpdateHead(PartitionOffset(0, 7), T0, remove_delete_to=True),)]),
            (
                key("b"),
                [
                    (
                        UpdateHead(
                            b.partition_offset,
                            T0,
                            expiry=replace(b.expiry, on=b.expiry.on + timedelta(days=30)),
                        ),
                    )
                ],
            ),
        ]
    )
    assert kinds(check(records, store)) == {"a": {Kind.HEAD_DELETE_TO}, "b": {Kind.HEAD_EXPIRY}}
    repair(records, store)
    assert check(records, store).results == []


def test_journals_older_than_the_log_start_are_listed_not_compared() -> None:
    records, store = replicated()
    folded = fold_partition(
        TOPIC, 0, records, beginning=6, end=len(records), now=T0, segment_size=SIZE
    )
    result = check_partition(folded, Snapshot(store), ids_of(store))
    unchecked = {r.key.id: r.unchecked for r in result.results}
    # `gone` starts over at its purge (offset 6), so it is checked; a and b began before it
    assert unchecked == {"a": Unchecked.BEFORE_RETENTION, "b": Unchecked.BEFORE_RETENTION}


def test_seq_ranges() -> None:
    assert seq_ranges([1, 2, 3, 7, 9, 10]) == "1..3, 7, 9..10"
    assert seq_ranges([5, 5]) == "5"
    assert seq_ranges(list(range(0, 20, 2)), limit=2) == "0, 2 and 8 more ranges"


@pytest.mark.parametrize("strict", [False, True])
def test_a_changed_row_with_a_column_the_fold_lacks_needs_the_strict_repair(strict: bool) -> None:
    records, store = replicated()
    row = next(r for r in store.rows(key("a")) if r.event.seq_nr == 7)
    with_origin = replace(row.event, origin="someone else")
    store.write([(key("a"), [(InsertRows(row.segment, (with_origin,), row.meta_record_id),)])])
    assert kinds(check(records, store)) == {"a": {Kind.EVENTS_CHANGED}}
    repair(records, store, strict=strict)
    # The in-memory store replaces whole rows, so both repairs converge here; Cassandra's INSERT
    # keeps columns it does not set, which the integration tests cover.
    assert check(records, store).results == []
