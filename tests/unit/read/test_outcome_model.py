"""An append's outcome scanned from Cassandra and Kafka (kjournal/read/outcome.py) against a naive model of the append rule.

Random histories of appends (with and without conditions, retries, conflicting resends), deletes
and purges go into an in-memory log; a prefix is replicated into the in-memory store. For every
append still in the tail, the outcome must be the model's: taken, replay, refused, conflict or gap. For
one replication already passed, the outcome may only be "unknown", or what reads show: never a
201 or a replay for events a read does not return.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.errors import OutcomeUnknown
from kjournal.fold.append_rule import MAX_GAP
from kjournal.memory import InMemoryEventualReader
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import Key
from kjournal.model import Outcome
from kjournal.model.head import JournalHead
from kjournal.read import JournalReader
from kjournal.read.outcome import scanned_outcome
from kjournal.wire.record import ConsumedRecord

from tests.support.histories import KEY
from tests.support.histories import OTHER
from tests.support.histories import PURGE
from tests.support.histories import Op
from tests.support.histories import a
from tests.support.histories import d
from tests.support.histories import judge
from tests.support.histories import log_of
from tests.support.histories import payload
from tests.support.histories import replicate
from tests.support.histories import value


def _model(ops: list[Op]) -> list[Outcome | None]:
    """Each op's outcome by the append rule, naively (None for other journals and non-appends)."""
    fates, _ = judge(ops)
    return [
        Outcome(fate[0].value) if fate and op.key == KEY and op.kind == "append" else None
        for op, fate in zip(ops, fates, strict=True)
    ]


def _check(ops: list[Op], split: int) -> None:
    log = log_of(ops)
    records = log.written[0]
    store = InMemoryReplicatedStore()
    replicate(store, records[:split])
    reader = JournalReader(InMemoryEventualReader(store), log, log)
    expected = _model(ops)

    async def run() -> None:
        read_now: dict[int, object] = {
            record.seq_nr: value(record) async for record in reader.read(KEY)
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
                assert read_now.get(n) == payload(KEY, n, op.variant), (offset, n)
            if outcome.outcome is Outcome.TAKEN:
                assert want is Outcome.TAKEN, offset

    asyncio.run(run())


@pytest.mark.parametrize(
    ("name", "ops", "outcomes"),
    [
        ("two writers race for seqNr 1", [a(1), a(1, variant=1)], ["taken", "conflict"]),
        ("a retry is a replay", [a(1, 2), a(1, 2)], ["taken", "replay"]),
        (
            "a retry of a conditional append is a replay, not a refusal",
            [a(1, expect=0), a(2, expect=1), a(2, expect=1)],
            ["taken", "taken", "replay"],
        ),
        (
            "the condition loser is refused",
            [a(1, expect=0), a(2, expect=1), a(2, variant=1, expect=1)],
            ["taken", "taken", "refused"],
        ),
        (
            "If-None-Match on an existing journal",
            [a(1), a(1, variant=1, expect=0)],
            ["taken", "refused"],
        ),
        ("an overlap is dropped whole", [a(1, 2), a(2, 3)], ["taken", "conflict"]),
        ("a gap is allowed without a condition", [a(1), a(5)], ["taken", "taken"]),
        ("a seqNr in a gap is not a replay", [a(1), a(5), a(3)], ["taken", "taken", "conflict"]),
        ("the largest gap allowed", [a(1), a(2 + MAX_GAP)], ["taken", "taken"]),
        ("one more is dropped", [a(1), a(3 + MAX_GAP)], ["taken", "gap"]),
        (
            "the far end of the seqNrs after a small journal",
            [a(1), a(2**63 - 1), a(2)],
            ["taken", "gap", "taken"],
        ),
        (
            "a new journal may start anywhere, and go on from there",
            [a(2**63 - 2), a(2**63 - 1, expect=2**63 - 2)],
            ["taken", "taken"],
        ),
        (
            "after a purge the journal starts over",
            [a(1), PURGE, a(1, variant=1, expect=0)],
            ["taken", None, "taken"],
        ),
        (
            "a deleted event cannot be compared: a resend of it is no replay",
            [a(1, 2), d(2), a(1, 2)],
            ["taken", None, "conflict"],
        ),
        (
            "a seqNr below a journal's first is no replay",
            [a(2), a(1, expect=0)],
            ["taken", "refused"],
        ),
        (
            "other journals do not count",
            [a(1), a(1, key=OTHER), a(2, expect=1)],
            ["taken", None, "taken"],
        ),
    ],
)
def test_outcomes_of_known_histories(name: str, ops: list[Op], outcomes: list[str | None]):
    expected = _model(ops)
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
            ops.append(a(first, last, draw(st.integers(0, 1)), expect))
            high = max(high, last)
        elif kind == "delete":
            ops.append(d(draw(st.integers(1, high + 1))))
        elif kind == "purge":
            ops.append(PURGE)
        else:
            ops.append(a(1, key=OTHER))
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
            replicate(self.store, self._later)
            self._later = []
        return await super().head(key)


def test_a_purge_replicated_between_pointer2_and_the_head_does_not_make_a_conflict_taken():
    # The conflict at offset 1 met a journal at seqNr 5. A purge after it, replicated while the
    # outcome was read, leaves no head: folded onto nothing, the conflict would look taken; it
    # is folded from the log start instead.
    ops = [a(1, 5), a(3, variant=1), PURGE]
    records = log_of(ops).written[0]
    log = log_of(ops)
    store = InMemoryReplicatedStore()
    replicate(store, records[:1])
    reader = JournalReader(_ReplicatedMeanwhile(store, records[1:]), log, log)

    outcome = asyncio.run(scanned_outcome(reader, KEY, 1))
    assert (outcome.outcome, outcome.seq_nr) == (Outcome.CONFLICT, 5)
