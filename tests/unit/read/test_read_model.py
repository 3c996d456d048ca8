"""The merge of Cassandra and the Kafka tail, against the truth: what full replication yields.

Every history of actions is cut at every point (and at random points, for longer histories): the
prefix is replicated into the in-memory store, the rest stays in the "Kafka" log. Reading then must
return exactly the events, and the pointer, that the store holds once everything is replicated.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kjournal.memory import InMemoryEventualReader, InMemoryReplicatedStore
from kjournal.model import (
    Action,
    Delete,
    DeleteHeader,
    Event,
    Events,
    JsonPayload,
    JsonValue,
    Key,
    Mark,
    MarkHeader,
    Purge,
    PurgeHeader,
    SeqNr,
)
from kjournal.read import JournalReader
from kjournal.replicate import replicate_partition
from kjournal.wire.record import ConsumedRecord, append_action, encode_action

from tests.support.memory_read import InMemoryPartitionLog

TOPIC = "journal"
KEY = Key(TOPIC, "entity")
OTHER = Key(TOPIC, "other")
NOW = datetime(2026, 11, 22, tzinfo=UTC)


@dataclass(frozen=True)
class Op:
    kind: str  # append | delete | purge | mark
    first: int = 0
    last: int = 0
    variant: int = 0  # an append's payloads differ from another's of the same seqNrs by it


def _log_with(
    ops: list[tuple[Key, Op]], partitions: int = 1, budget: int = 1 << 30
) -> InMemoryPartitionLog:
    log = InMemoryPartitionLog(TOPIC, partitions, payload_budget=budget)
    for index, (key, op) in enumerate(ops):
        timestamp = datetime.fromtimestamp(1_700_000_000 + index, UTC)
        action: Action
        if op.kind == "append":
            events = Events(
                tuple(
                    Event(SeqNr(n), payload=JsonPayload(_payload(key, n, op.variant)))
                    for n in range(op.first, op.last + 1)
                )
            )
            action = append_action(key, timestamp, events)
        elif op.kind == "delete":
            action = Delete(key, timestamp, DeleteHeader(SeqNr(op.last)))
        elif op.kind == "purge":
            action = Purge(key, timestamp, PurgeHeader())
        else:
            action = Mark(key, timestamp, MarkHeader(f"m{index}"))
        parts = encode_action(action)
        log.append(parts.key, parts.value, parts.headers, parts.timestamp_ms)
    return log


def _payload(key: Key, n: int, variant: int) -> dict[str, JsonValue]:
    payload: dict[str, JsonValue] = {"n": n, "key": key.id}
    if variant:
        payload["variant"] = variant
    return payload


def _replicate(
    store: InMemoryReplicatedStore, records: list[ConsumedRecord], slices: int = 1
) -> None:
    size = max(1, -(-len(records) // slices))
    for start in range(0, len(records), size):
        replicate_partition(TOPIC, 0, records[start : start + size], store, NOW)


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
            (r.seq_nr, r.event.payload.value if r.event.payload else None)
            async for r in reader.read(KEY, from_, to, limit)
        ]
        return events, (await reader.view(KEY)).info.seq_nr

    return asyncio.run(run())


def _truth(log: InMemoryPartitionLog) -> tuple[list[tuple[int, object]], int | None]:
    store = InMemoryReplicatedStore()
    _replicate(store, log.records[0])
    head = store.head(KEY)
    events: list[tuple[int, object]] = [
        (e.seq_nr, e.event.payload.value if e.event.payload else None) for e in store.events(KEY)
    ]
    return events, None if head is None else head.seq_nr


def _check_every_split(ops: list[tuple[Key, Op]], budget: int = 1 << 30) -> None:
    log = _log_with(ops, budget=budget)
    expected_events, expected_pointer = _truth(log)
    records = log.records[0]
    for split in range(len(records) + 1):
        store = InMemoryReplicatedStore()
        _replicate(store, records[:split])
        events, pointer = _read(log, store)
        assert (events, pointer) == (expected_events, expected_pointer), f"split at {split}"


def a(first: int, last: int | None = None) -> tuple[Key, Op]:
    return KEY, Op("append", first, first if last is None else last)


def d(to: int) -> tuple[Key, Op]:
    return KEY, Op("delete", last=to)


PURGE = (KEY, Op("purge"))
MARK = (KEY, Op("mark"))
NOISE = (OTHER, Op("append", 1, 3))


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
def test_every_split_reads_like_full_replication(name: str, ops: list[tuple[Key, Op]]):
    _check_every_split(ops)


def test_payloads_beyond_the_budget_are_read_again_from_the_log():
    ops = [a(1, 2), a(3, 4), d(1), a(5, 9), a(10)]
    _check_every_split(ops, budget=1)


def test_a_pending_delete_is_honoured_on_the_first_event():
    log = _log_with([a(1, 5), d(3)])
    store = InMemoryReplicatedStore()
    _replicate(store, log.records[0][:1])  # the append is in Cassandra, the delete only in Kafka

    events, pointer = _read(log, store)

    assert [seq for seq, _ in events] == [4, 5]
    assert pointer == 5


def test_a_pending_purge_hides_everything_replicated():
    log = _log_with([a(1, 5), PURGE])
    store = InMemoryReplicatedStore()
    _replicate(store, log.records[0][:1])

    assert _read(log, store) == ([], None)


@pytest.mark.parametrize(
    ("from_", "to", "limit"), [(1, 3, None), (2, 9, 2), (4, 4, None), (7, 10, 5), (11, 20, None)]
)
def test_ranges_and_limits_at_every_split(from_: int, to: int, limit: int | None):
    ops = [a(1, 2), a(3), d(1), a(4, 8), a(9, 10)]
    log = _log_with(ops)
    full, _ = _truth(log)
    expected = [e for e in full if from_ <= e[0] <= to][:limit]
    for split in range(len(log.records[0]) + 1):
        store = InMemoryReplicatedStore()
        _replicate(store, log.records[0][:split])
        assert _read(log, store, from_, to, limit)[0] == expected, f"split at {split}"


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[Key, Op]]:
    ops: list[tuple[Key, Op]] = []
    pointer = 0
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(
            st.sampled_from(["append", "append", "append", "delete", "purge", "mark", "noise"])
        )
        if kind == "append":
            first = pointer + 1 + draw(st.integers(0, 2))
            last = first + draw(st.integers(0, 3))
            ops.append(a(first, last))
            pointer = last
        elif kind == "delete":
            ops.append(d(draw(st.integers(1, pointer + 3))))
        elif kind == "purge":
            ops.append(PURGE)
            pointer = 0
        elif kind == "mark":
            ops.append(MARK)
        else:
            ops.append(NOISE)
    return ops


@settings(max_examples=150, deadline=None)
@given(ops=histories(), slices=st.integers(1, 3), data=st.data())
def test_random_histories_at_random_splits(
    ops: list[tuple[Key, Op]], slices: int, data: st.DataObject
):
    log = _log_with(ops)
    records = log.records[0]
    split = data.draw(st.integers(0, len(records)))
    store = InMemoryReplicatedStore()
    _replicate(store, records[:split], slices)

    assert _read(log, store) == _truth(log)


def _oracle(ops: list[tuple[Key, Op]]) -> tuple[list[tuple[int, object]], int | None]:
    """The append rule, naively (fold/append_rule.py): in offset order an append is taken whole
    if the journal does not exist or its first seqNr is above the journal's, else dropped whole;
    a delete hides up to its bound (never beyond the highest); a purge starts the journal over."""
    events: dict[int, dict[str, JsonValue]] = {}
    high, delete_to, exists = 0, 0, False
    for key, op in ops:
        if key != KEY:
            continue
        if op.kind == "append":
            if exists and op.first <= high:
                continue
            if not exists:
                exists, delete_to = True, op.first - 1
            for n in range(op.first, op.last + 1):
                events[n] = _payload(key, n, op.variant)
            high = op.last
        elif op.kind == "delete" and exists:
            delete_to = max(delete_to, min(op.last, high))
        elif op.kind == "purge" and exists:
            events, high, delete_to, exists = {}, 0, 0, False
    kept: list[tuple[int, object]] = [
        (n, payload) for n, payload in sorted(events.items()) if n > delete_to
    ]
    return kept, high if exists else None


def retry(first: int, last: int | None = None, variant: int = 0) -> tuple[Key, Op]:
    """An append of seqNrs the journal may already have (a resend, or an overlap)."""
    return KEY, Op("append", first, first if last is None else last, variant)


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
    name: str, ops: list[tuple[Key, Op]]
) -> None:
    assert _truth(_log_with(ops)) == _oracle(ops)
    _check_every_split(ops)


@st.composite
def histories_with_retries(draw: st.DrawFn) -> list[tuple[Key, Op]]:
    ops: list[tuple[Key, Op]] = []
    pointer = 0
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from(["append", "append", "retry", "retry", "delete", "purge"]))
        if kind == "append":
            first = pointer + 1 + draw(st.integers(0, 1))
            last = first + draw(st.integers(0, 3))
            ops.append(a(first, last))
            pointer = last
        elif kind == "retry":
            first = draw(st.integers(1, pointer + 2))
            last = first + draw(st.integers(0, 3))
            ops.append(retry(first, last, variant=draw(st.integers(0, 1))))
            pointer = max(pointer, last)
        elif kind == "delete":
            ops.append(d(draw(st.integers(1, pointer + 2))))
        else:
            ops.append(PURGE)
            pointer = 0
        if draw(st.booleans()):
            ops.append(NOISE)
    return ops


@settings(max_examples=200, deadline=None)
@given(ops=histories_with_retries(), slices=st.integers(1, 4), data=st.data())
def test_random_retries_read_the_same_before_during_and_after_replication(
    ops: list[tuple[Key, Op]], slices: int, data: st.DataObject
) -> None:
    log = _log_with(ops)
    records = log.records[0]
    expected = _oracle(ops)
    split = data.draw(st.integers(0, len(records)))
    for replicated in (0, split, len(records)):
        store = InMemoryReplicatedStore()
        _replicate(store, records[:replicated], slices)
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
        events: list[tuple[int, object]] = [
            (r.seq_nr, r.event.payload.value if r.event.payload else None)
            async for r in reader.events(view)
        ]
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
def test_a_head_newer_than_pointer2_reads_like_full_replication(
    name: str, ops: list[tuple[Key, Op]]
) -> None:
    log = _log_with(ops)
    expected = _truth(log)
    records = log.records[0]
    for split in range(len(records) + 1):
        store = InMemoryReplicatedStore()
        _replicate(store, records[:split])
        for stale in range(split + 1):
            pointer2 = stale - 1 if stale else None
            assert _read_with_pointer2(log, store, pointer2) == expected, (
                f"{split} records replicated, pointer2 read after {stale}"
            )


@settings(max_examples=150, deadline=None)
@given(ops=histories_with_retries(), data=st.data())
def test_random_histories_with_a_lagging_pointer2(
    ops: list[tuple[Key, Op]], data: st.DataObject
) -> None:
    log = _log_with(ops)
    records = log.records[0]
    split = data.draw(st.integers(0, len(records)))
    stale = data.draw(st.integers(0, split))
    store = InMemoryReplicatedStore()
    _replicate(store, records[:split])

    assert _read_with_pointer2(log, store, stale - 1 if stale else None) == _oracle(ops)
