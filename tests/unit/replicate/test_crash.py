"""Crash safety, case by case: kill the replicator before each of its writes in turn, replay the
partition from pointer2 (sliced the same way or not), and compare with a run that never crashed.

The model-based tests cover this at random; these pin the cases where the order of writes is
what makes a replay correct (rows before head, purge rows before the head delete, the segments a
purge reaches).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace

import pytest
from kjournal.memory import InMemoryReplicatedStore
from kjournal.replicate import replicate_partition
from kjournal.testing.records import KEY
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import delete_record
from kjournal.testing.records import mark_record
from kjournal.testing.records import purge_record
from kjournal.wire.record import ConsumedRecord

from tests.unit.replicate.test_model import Crash
from tests.unit.replicate.test_model import CrashingStore

LONG = [append_record(0, range(1, 11)), append_record(1, range(11, 21))]


def state(store: InMemoryReplicatedStore) -> object:
    """What a run left behind; record ids (random) only as "the head's" or not, and not how many
    times the head was written (a replay writes it again)."""
    row = store.head_row(KEY)
    record_id = None if row is None else row.head.record_id
    if row is not None:
        row = replace(row, head=replace(row.head, record_id=None), written=0)
    return (
        row,
        [(r.event, r.meta_record_id == record_id) for r in store.rows(KEY)],
        store.pointer2(TOPIC, 0),
        [(q.offset, q.reason) for q in store.quarantined(TOPIC, KEY.id)],
    )


def crash_everywhere(
    before: Sequence[ConsumedRecord],
    records: Sequence[ConsumedRecord],
    replay: Sequence[Sequence[ConsumedRecord]] | None = None,
    segment_size: int = 2,
) -> int:
    """Crash before each write of replicating `records` (after `before`), then replay.

    `replay` slices the records again after the crash (default: all of them at once).
    Returns the number of crash points tried.
    """
    reference = CrashingStore(segment_size=segment_size)
    replicate_partition(TOPIC, 0, before, reference, T0)
    start = reference.writes
    replicate_partition(TOPIC, 0, records, reference, T0)
    expected = state(reference)
    points = reference.writes - start
    for crash_at in range(1, points + 1):
        store = CrashingStore(segment_size=segment_size)
        replicate_partition(TOPIC, 0, before, store, T0)
        store.crash_at = store.writes + crash_at
        with contextlib.suppress(Crash):
            replicate_partition(TOPIC, 0, records, store, T0)
        store.crash_at = None
        for slice_ in replay or [records]:
            replicate_partition(TOPIC, 0, slice_, store, T0)
        assert state(store) == expected, f"crash before write {crash_at}"
    return points


@pytest.mark.parametrize("segment_size", [2, 3, 10_000])
def test_append(segment_size: int) -> None:
    assert crash_everywhere([], LONG, segment_size=segment_size) >= 3


def test_delete_of_a_long_journal() -> None:
    assert crash_everywhere(LONG, [delete_record(2, 15)]) >= 8


def test_purge_of_a_long_journal_with_a_partial_delete() -> None:
    # A crash between a purge's row deletes and its head delete must not leave rows behind, even
    # those far below the head's seqNr (kafka-journal marks the head first and then only clears
    # the segments around the new delete_to on replay).
    assert crash_everywhere([*LONG, delete_record(2, 5)], [purge_record(3)]) >= 8


def test_appends_deletes_and_purge_in_one_slice() -> None:
    records = [
        append_record(0, [1, 2, 3]),
        append_record(1, [4, 5]),
        delete_record(2, 4),
        mark_record(3),
        append_record(4, [6, 7, 8, 9]),
        purge_record(5),
        append_record(6, [1]),
    ]
    assert crash_everywhere([], records) >= 5


def test_rows_of_a_crashed_append_are_cleared_by_a_purge_that_folds_it_away() -> None:
    # The crash leaves the rows of a new journal without a head; the replay sees the append
    # together with a purge, folds the append away and must still clear those rows.
    first = [append_record(0, [1, 2, 3, 4, 5, 6, 7])]
    store = CrashingStore(crash_at=2)  # the rows went in, the head did not
    with contextlib.suppress(Crash):
        replicate_partition(TOPIC, 0, first, store, T0)
    assert store.rows(KEY) != []
    assert store.head(KEY) is None
    store.crash_at = None
    replicate_partition(TOPIC, 0, [*first, purge_record(1)], store, T0)
    assert store.rows(KEY) == []


def test_replay_sliced_differently() -> None:
    records = [
        append_record(0, [1, 2]),
        append_record(1, [3, 4]),
        delete_record(2, 3),
        append_record(3, [5]),
        purge_record(4),
        append_record(5, [1, 2]),
        delete_record(6, 1),
    ]
    replay = [records[:2], records[2:5], records[5:]]
    assert crash_everywhere([], records, replay) >= 6
