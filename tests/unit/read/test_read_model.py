"""The merge of Cassandra and the Kafka tail, against the truth: what full replication yields.

Every history of actions is cut at every point (and at random points, for longer histories): the
prefix is replicated into the in-memory store, the rest stays in the "Kafka" log. Reading then must
return exactly the events, and the pointer, that the store holds once everything is replicated.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.memory import InMemoryEventualReader
from kjournal.memory import InMemoryReplicatedStore
from kjournal.read import JournalReader

from tests.support.histories import KEY
from tests.support.histories import MARK
from tests.support.histories import NOISE
from tests.support.histories import PURGE
from tests.support.histories import Op
from tests.support.histories import a
from tests.support.histories import d
from tests.support.histories import fully_replicated
from tests.support.histories import histories
from tests.support.histories import histories_with_retries
from tests.support.histories import judge
from tests.support.histories import log_of
from tests.support.histories import replicate
from tests.support.histories import retry
from tests.support.histories import value
from tests.support.memory_read import InMemoryPartitionLog


def _read(
    log: InMemoryPartitionLog,
    store: InMemoryReplicatedStore,
    from_: int = 1,
    to: int = 2**63 - 1,
    limit: int | None = None,
) -> tuple[list[tuple[int, object]], int | None]:
    reader = JournalReader(InMemoryEventualReader(store), log, log)

    async def run() -> tuple[list[tuple[int, object]], int | None]:
        events: list[tuple[int, object]] = [
            (r.seq_nr, value(r)) async for r in reader.read(KEY, from_, to, limit)
        ]
        return events, (await reader.view(KEY)).info.seq_nr

    return asyncio.run(run())


def _check_every_split(ops: list[Op], budget: int = 1 << 30) -> None:
    log = log_of(ops, budget)
    expected = fully_replicated(log)
    records = log.written[0]
    for split in range(len(records) + 1):
        store = InMemoryReplicatedStore()
        replicate(store, records[:split])
        assert _read(log, store) == expected, f"split at {split}"


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("append then read", [a(1), a(2, 3), a(4, 6)]),
        ("interleaving of the Scala JournalSpec", [a(1), d(3), a(2, 3), d(2), a(4)]),
        ("delete all", [a(1, 3), d(3)]),
        ("delete beyond the end", [a(1, 3), d(10)]),
        ("delete first", [a(1, 3), d(1)]),
        ("delete except last", [a(1, 2), a(3), d(2)]),
        ("purge", [a(1, 3), PURGE]),
        ("re-append after purge", [a(1, 3), PURGE, a(1, 2)]),
        ("purge then delete", [a(1, 3), PURGE, d(2)]),
        ("delete on a journal that never existed", [d(5)]),
        ("purge of nothing", [PURGE, a(1)]),
        ("marks change nothing", [MARK, a(1), MARK, a(2), MARK]),
        ("gaps in seqNrs", [a(1), a(5, 6), a(10)]),
        ("first append starts late", [a(5, 7), d(5), a(8)]),
        ("other journals interleaved", [NOISE, a(1), NOISE, d(1), NOISE, a(2)]),
        ("many deletes", [a(1, 10), d(2), d(4), d(3), d(8), a(11), d(11)]),
    ],
)
def test_every_split_reads_like_full_replication(name: str, ops: list[Op]):
    _check_every_split(ops)


def test_payloads_beyond_the_budget_are_read_again_from_the_log():
    ops = [a(1, 2), a(3, 4), d(1), a(5, 9), a(10)]
    _check_every_split(ops, budget=1)


def test_a_pending_delete_is_honoured_on_the_first_event():
    log = log_of([a(1, 5), d(3)])
    store = InMemoryReplicatedStore()
    replicate(store, log.written[0][:1])  # the append is in Cassandra, the delete only in Kafka

    events, pointer = _read(log, store)

    assert [seq for seq, _ in events] == [4, 5]
    assert pointer == 5


def test_a_pending_purge_hides_everything_replicated():
    log = log_of([a(1, 5), PURGE])
    store = InMemoryReplicatedStore()
    replicate(store, log.written[0][:1])

    assert _read(log, store) == ([], None)


@pytest.mark.parametrize(
    ("from_", "to", "limit"), [(1, 3, None), (2, 9, 2), (4, 4, None), (7, 10, 5), (11, 20, None)]
)
def test_ranges_and_limits_at_every_split(from_: int, to: int, limit: int | None):
    ops = [a(1, 2), a(3), d(1), a(4, 8), a(9, 10)]
    log = log_of(ops)
    full, _ = fully_replicated(log)
    expected = [e for e in full if from_ <= e[0] <= to][:limit]
    for split in range(len(log.written[0]) + 1):
        store = InMemoryReplicatedStore()
        replicate(store, log.written[0][:split])
        assert _read(log, store, from_, to, limit)[0] == expected, f"split at {split}"


@settings(max_examples=150, deadline=None)
@given(ops=histories(), slices=st.integers(1, 3), data=st.data())
def test_random_histories_at_random_splits(ops: list[Op], slices: int, data: st.DataObject):
    log = log_of(ops)
    records = log.written[0]
    split = data.draw(st.integers(0, len(records)))
    store = InMemoryReplicatedStore()
    replicate(store, records[:split], slices)

    assert _read(log, store) == fully_replicated(log)


def _oracle(ops: list[Op]) -> tuple[list[tuple[int, object]], int | None]:
    """KEY's events and seqNr by the append rule, naively (tests/support/histories.py)."""
    journal = judge(ops)[1][KEY]
    return journal.readable(), journal.head()


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("a resent append", [a(1), retry(2), retry(2), a(3)]),
        ("overlapping appends", [a(1, 3), retry(2, 4), retry(1)]),
        ("a resend with other content", [a(1, 2), retry(2, 3, variant=1)]),
        ("late lower seqNrs", [a(1501, 1505), retry(1, 5)]),
        ("a resend after a delete", [a(1, 3), d(3), retry(3, 4)]),
        ("a resend after a purge is a new journal", [a(1, 3), PURGE, retry(1, 2, variant=1)]),
        ("a resend across other journals", [a(1, 2), NOISE, retry(1, 3, variant=2), NOISE]),
    ],
)
def test_duplicates_are_dropped_alike_before_and_after_replication(
    name: str, ops: list[Op]
) -> None:
    assert fully_replicated(log_of(ops)) == _oracle(ops)
    _check_every_split(ops)


@settings(max_examples=200, deadline=None)
@given(ops=histories_with_retries(), slices=st.integers(1, 4), data=st.data())
def test_random_retries_read_the_same_before_during_and_after_replication(
    ops: list[Op], slices: int, data: st.DataObject
) -> None:
    log = log_of(ops)
    records = log.written[0]
    expected = _oracle(ops)
    split = data.draw(st.integers(0, len(records)))
    for replicated in (0, split, len(records)):
        store = InMemoryReplicatedStore()
        replicate(store, records[:replicated], slices)
        assert _read(log, store) == expected, f"{replicated} of {len(records)} records replicated"


class _LaggingPointer2(InMemoryEventualReader):
    """pointer2 as it was before the replicator moved on: a read takes pointer2 first and the
    head after it, so replication may land between the two and the head is then newer."""

    def __init__(self, store: InMemoryReplicatedStore, pointer2: int | None) -> None:
        super().__init__(store)
        self._stale = pointer2

    async def pointer2(self, topic: str, partition: int) -> int | None:
        return self._stale


def _read_with_pointer2(
    log: InMemoryPartitionLog, store: InMemoryReplicatedStore, pointer2: int | None
) -> tuple[list[tuple[int, object]], int | None]:
    reader = JournalReader(_LaggingPointer2(store, pointer2), log, log)

    async def run() -> tuple[list[tuple[int, object]], int | None]:
        view = await reader.view(KEY)
        events: list[tuple[int, object]] = [(r.seq_nr, value(r)) async for r in reader.events(view)]
        return events, view.info.seq_nr

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("a purge then a new journal", [a(1, 4), PURGE, a(1)]),
        ("a delete then more", [a(1, 4), d(2), a(5)]),
        ("a resend after a purge", [a(1, 3), PURGE, retry(1, 2, variant=1), a(3)]),
        ("other journals between", [a(1, 2), NOISE, PURGE, NOISE, a(1), a(2, 3)]),
    ],
)
def test_a_head_newer_than_pointer2_reads_like_full_replication(name: str, ops: list[Op]) -> None:
    log = log_of(ops)
    expected = fully_replicated(log)
    records = log.written[0]
    for split in range(len(records) + 1):
        store = InMemoryReplicatedStore()
        replicate(store, records[:split])
        for stale in range(split + 1):
            pointer2 = stale - 1 if stale else None
            assert _read_with_pointer2(log, store, pointer2) == expected, (
                f"{split} records replicated, pointer2 read after {stale}"
            )


@settings(max_examples=150, deadline=None)
@given(ops=histories_with_retries(), data=st.data())
def test_random_histories_with_a_lagging_pointer2(ops: list[Op], data: st.DataObject) -> None:
    log = log_of(ops)
    records = log.written[0]
    split = data.draw(st.integers(0, len(records)))
    stale = data.draw(st.integers(0, split))
    store = InMemoryReplicatedStore()
    replicate(store, records[:split])

    assert _read_with_pointer2(log, store, stale - 1 if stale else None) == _oracle(ops)
