"""An append's outcome scanned from Cassandra and Kafka (kjournal/read/outcome.py) against a naive model of the append rule.

Random histories of appends (with and without conditions, retries, conflicting resends), deletes
and purges go into an in-memory log; a prefix is replicated into the in-memory store. For every
append still in the tail, the outcome must be the model's: taken, replay, refused, conflict or gap. For
one replication already passed, the outcome may only be "unknown", or what reads show: never a
201 or a replay for events a read does not return.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kjournal.errors import OutcomeUnknown
from kjournal.fold.append_rule import MAX_GAP
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
    Outcome,
    Purge,
    PurgeHeader,
    SeqNr,
)
from kjournal.model.head import JournalHead
from kjournal.read import JournalReader
from kjournal.read.outcome import scanned_outcome
from kjournal.replicate import replicate_partition
from kjournal.wire.record import ConsumedRecord, append_action, encode_action

from tests.support.memory_read import InMemoryPartitionLog

TOPIC = "journal"
KEY = Key(TOPIC, "entity")
OTHER = Key(TOPIC, "other")
NOW = datetime(2026, 11, 28, tzinfo=UTC)


@dataclass(frozen=True)
class Op:
    key: Key
    kind: str  # append | delete | purge
    first: int = 0
    last: int = 0
    variant: int = 0
    expect: int | None = None


def _payload(key: Key, n: int, variant: int) -> dict[str, JsonValue]:
    return {"n": n, "key": key.id, "variant": variant}


def _log_with(ops: list[Op]) -> InMemoryPartitionLog:
    log = InMemoryPartitionLog(TOPIC, 1)
    for index, op in enumerate(ops):
        timestamp = datetime.fromtimestamp(1_700_000_000 + index, UTC)
        action: Action
        if op.kind == "append":
            events = Events(
                tuple(
                    Event(SeqNr(n), payload=JsonPayload(_payload(op.key, n, op.variant)))
                    for n in range(op.first, op.last + 1)
                )
            )
            action = append_action(op.key, timestamp, events, expect=op.expect)
        elif op.kind == "delete":
            action = Delete(op.key, timestamp, DeleteHeader(SeqNr(op.last)))
        else:
            action = Purge(op.key, timestamp, PurgeHeader())
        parts = encode_action(action)
        log.append(parts.key, parts.value, parts.headers, parts.timestamp_ms)
    return log


def _model(ops: list[Op]) -> tuple[list[Outcome | None], dict[int, dict[str, JsonValue]]]:
    """Each op's outcome (None for other journals and non-appends) and KEY's readable events."""
    events: dict[int, dict[str, JsonValue]] = {}
    high, delete_to, exists = 0, 0, False
    outcomes: list[Outcome | None] = []
    for op in ops:
        if op.key != KEY:
            outcomes.append(None)
            continue
        if op.kind == "append":
            if op.expect is None:
                taken = not exists or high < op.first <= high + 1 + MAX_GAP
            elif op.expect == 0:
                taken = not exists
            else:
                taken = exists and high == op.expect and op.first == op.expect + 1
            if taken:
                if not exists:
                    exists, delete_to = True, op.first - 1
                for n in range(op.first, op.last + 1):
                    events[n] = _payload(KEY, n, op.variant)
                high = op.last
                outcomes.append(Outcome.TAKEN)
                continue
            identical = exists and op.last <= high
            for n in range(op.first, op.last + 1):
                if n <= delete_to or events.get(n) != _payload(KEY, n, op.variant):
                    identical = False
            if identical:
                outcomes.append(Outcome.REPLAY)
            elif op.expect is not None:
                outcomes.append(Outcome.REFUSED)
            else:
                outcomes.append(Outcome.GAP if op.first > high else Outcome.CONFLICT)
        elif op.kind == "delete":
            if exists:
                delete_to = max(delete_to, min(op.last, high))
            outcomes.append(None)
        else:
            if exists:
                events, high, delete_to, exists = {}, 0, 0, False
            outcomes.append(None)
    readable = {n: payload for n, payload in events.items() if n > delete_to}
    return outcomes, readable


def _check(ops: list[Op], split: int) -> None:
    log = _log_with(ops)
    records = log.records[0]
    store = InMemoryReplicatedStore()
    if split:
        replicate_partition(TOPIC, 0, records[:split], store, NOW)
    reader = JournalReader(InMemoryEventualReader(store), log, log)
    expected, _ = _model(ops)

    async def run() -> None:
        read_now: dict[int, object] = {
            record.seq_nr: record.event.payload.value if record.event.payload else None
            async for record in reader.read(KEY)
        }
        for offset, want in enumerate(expected):
            if want is None:
                continue
            op = ops[offset]
            try:
                outcome = await scanned_outcome(reader, KEY, offset)
            except OutcomeUnknown:
                assert offset < split, f"offset {offset}: unknown, though not replicated yet"
                continue
            if offset >= split:
                assert outcome.outcome is want, f"offset {offset} of {ops}"
                continue
            # Replicated before it was asked: only what reads show may be claimed.
            assert outcome.outcome in (Outcome.TAKEN, Outcome.REPLAY), offset
            for n in range(op.first, op.last + 1):
                assert read_now.get(n) == _payload(KEY, n, op.variant), (offset, n)
            if outcome.outcome is Outcome.TAKEN:
                assert want is Outcome.TAKEN, offset

    asyncio.run(run())


def ap(
    first: int,
    last: int | None = None,
    variant: int = 0,
    expect: int | None = None,
    key: Key = KEY,
) -> Op:
    return Op(key, "append", first, first if last is None else last, variant, expect)


@pytest.mark.parametrize(
    ("name", "ops", "outcomes"),
    [
        ("two writers race for seqNr 1", [ap(1), ap(1, variant=1)], ["taken", "conflict"]),
        ("a retry is a replay", [ap(1, 2), ap(1, 2)], ["taken", "replay"]),
        (
            "a retry of a conditional append is a replay, not a refusal",
            [ap(1, expect=0), ap(2, expect=1), ap(2, expect=1)],
            ["taken", "taken", "replay"],
        ),
        (
            "the condition loser is refused",
            [ap(1, expect=0), ap(2, expect=1), ap(2, variant=1, expect=1)],
            ["taken", "taken", "refused"],
        ),
        (
            "If-None-Match on an existing journal",
            [ap(1), ap(1, variant=1, expect=0)],
            ["taken", "refused"],
        ),
        ("an overlap is dropped whole", [ap(1, 2), ap(2, 3)], ["taken", "conflict"]),
        ("a gap is allowed without a condition", [ap(1), ap(5)], ["taken", "taken"]),
        ("a seqNr in a gap is not a replay", [ap(1), ap(5), ap(3)], ["taken", "taken", "conflict"]),
        ("the largest gap allowed", [ap(1), ap(2 + MAX_GAP)], ["taken", "taken"]),
        ("one more is dropped", [ap(1), ap(3 + MAX_GAP)], ["taken", "gap"]),
        (
            "the far end of the seqNrs after a small journal",
            [ap(1), ap(2**63 - 1), ap(2)],
            ["taken", "gap", "taken"],
        ),
        (
            "a new journal may start anywhere, and go on from there",
            [ap(2**63 - 2), ap(2**63 - 1, expect=2**63 - 2)],
            ["taken", "taken"],
        ),
        (
            "after a purge the journal starts over",
            [ap(1), Op(KEY, "purge"), ap(1, variant=1, expect=0)],
            ["taken", None, "taken"],
        ),
        (
            "a deleted event cannot be compared: a resend of it is no replay",
            [ap(1, 2), Op(KEY, "delete", 0, 2), ap(1, 2)],
            ["taken", None, "conflict"],
        ),
        (
            "a seqNr below a journal's first is no replay",
            [ap(2), ap(1, expect=0)],
            ["taken", "refused"],
        ),
        (
            "other journals do not count",
            [ap(1), ap(1, key=OTHER), ap(2, expect=1)],
            ["taken", None, "taken"],
        ),
    ],
)
def test_outcomes_of_known_histories(name: str, ops: list[Op], outcomes: list[str | None]):
    expected, _ = _model(ops)
    assert [None if o is None else o.value for o in expected] == outcomes, "the model itself"
    for split in range(len(ops) + 1):
        _check(ops, split)


@st.composite
def histories(draw: st.DrawFn) -> list[Op]:
    ops: list[Op] = []
    high = 0
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["append"] * 6 + ["delete", "purge", "other"]))
        if kind == "append":
            first = draw(
                st.one_of(st.integers(1, high + 2), st.just(high + 2 + MAX_GAP), st.just(2**62))
            )
            last = draw(st.integers(first, first + 2))
            expect = draw(st.sampled_from([None, None, 0, first - 1, high]))
            ops.append(ap(first, last, draw(st.integers(0, 1)), expect))
            high = max(high, last)
        elif kind == "delete":
            ops.append(Op(KEY, "delete", 0, draw(st.integers(1, high + 1))))
        elif kind == "purge":
            ops.append(Op(KEY, "purge"))
        else:
            ops.append(ap(1, key=OTHER))
    return ops


@given(histories(), st.data())
@settings(max_examples=200, deadline=None)
def test_random_histories_at_random_splits(ops: list[Op], data: st.DataObject):
    _check(ops, data.draw(st.integers(0, len(ops))))


class _ReplicatedMeanwhile(InMemoryEventualReader):
    """Replicates `later` into the store when the head is first asked: replication passing
    between the outcome's pointer2 and its head."""

    def __init__(self, store: InMemoryReplicatedStore, later: list[ConsumedRecord]) -> None:
        super().__init__(store)
        self._later = later

    async def head(self, key: Key) -> JournalHead | None:
        if self._later:
            replicate_partition(TOPIC, 0, self._later, self.store, NOW)
            self._later = []
        return await super().head(key)


def test_a_purge_replicated_between_pointer2_and_the_head_does_not_make_a_conflict_taken():
    # The conflict at offset 1 met a journal at seqNr 5. A purge after it, replicated while the
    # outcome was read, leaves no head: folded onto nothing, the conflict would look taken; it
    # is folded from the log start instead.
    ops = [ap(1, 5), ap(3, variant=1), Op(KEY, "purge")]
    records = _log_with(ops).records[0]
    log = _log_with(ops)
    store = InMemoryReplicatedStore()
    replicate_partition(TOPIC, 0, records[:1], store, NOW)
    reader = JournalReader(_ReplicatedMeanwhile(store, records[1:]), log, log)

    outcome = asyncio.run(scanned_outcome(reader, KEY, 1))
    assert (outcome.outcome, outcome.seq_nr) == (Outcome.CONFLICT, 5)
