"""The partition's fold (kjournal/read/partition_fold.py) against a naive model of the append rule.

A random history of several journals' appends (with and without conditions, retries, conflicting
resends, gaps), deletes, purges, marks and poison records is produced into an in-memory log a
record at a time; the fold consumes it; the replicator (the real `replicate_partition`, into the
in-memory store) copies arbitrary prefixes of what was produced at arbitrary moments, ahead of
the fold or behind it; journals are started from the store's heads in rounds whose head reads
and end offsets are taken at one moment and completed at a later one, as the follower does
(kjournal/read/follower.py). Every fate the fold decides must be the model's; when replication
never runs ahead of what the fold decided, it must decide every record. With the topic's journals
listed (read/known.py), the listing reads each journal's head at a moment of its own, while
replication and the fold go on, and the journals it shows cannot exist start empty.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.fold.head_info import HeadInfo
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import ActionRecord
from kjournal.model import Key
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.read.bootstrap import start_of
from kjournal.read.fates import FateKind
from kjournal.read.journal_entry import Base
from kjournal.read.known import KnownJournals
from kjournal.read.partition_fold import PartitionFold
from kjournal.read.partition_fold import PayloadBudget
from kjournal.read.partition_fold import Pending
from kjournal.read.records import Poison
from kjournal.read.records import decoded
from kjournal.read.tail import Tail

from tests.support.histories import TOPIC
from tests.support.histories import Op
from tests.support.histories import a
from tests.support.histories import d
from tests.support.histories import judge
from tests.support.histories import log_of
from tests.support.histories import replicate

KEYS = [Key(TOPIC, "a"), Key(TOPIC, "b"), Key(TOPIC, "c")]


def _same_in_every_run(id_: str) -> int:
    """The listing's Bloom filters hash with this, not Python's salted `hash`: a false positive
    (a journal taken for one that may exist) then falls on the same ids in every run, and the
    tests that say which journals start new say it the same way each time."""
    digest = hashlib.blake2b(id_.encode(), digest_size=16).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass
class _Round:
    """Journals whose heads were read at one moment: E is the log's end then."""

    ids: list[str]
    waits: dict[str, Pending]
    begins: dict[str, tuple[int, tuple[int, int] | None]]
    heads: dict[str, JournalHead | None]
    quarantined: dict[str, QuarantinedRecord | None]
    end: int
    unmet: dict[str, bool]


class _Run:
    """The fold, the log as produced so far, the replicator's store, and rounds of starts."""

    def __init__(
        self,
        ops: list[Op],
        replicated: int,
        max_journals: int,
        max_pending: int = 100_000,
        *,
        listing: bool = False,
    ) -> None:
        self.records = log_of(ops).written[0]
        self.store = InMemoryReplicatedStore()
        replicate(self.store, self.records[:replicated])
        pointer = self.store.pointer2(TOPIC, 0)
        start = 0 if pointer is None else pointer + 1
        self.fold = PartitionFold(
            TOPIC,
            0,
            start,
            PayloadBudget(1 << 20),
            max_journals=max_journals,
            max_fates=10_000,
            max_pending_records=max_pending,
        )
        self.fold.quarantines_known(self.store.quarantined_ids(TOPIC), start - 1)
        if listing:  # after pointer2 was read, as the follower lists them
            self.fold.known = KnownJournals(capacity=2, hash_func=_same_in_every_run)
        self.listed = 0  # journals whose heads the listing has read
        self.produced = start
        self.rounds: list[_Round] = []
        # Records a start could not decide: before the first purge of a journal without a head.
        self.undecidable: set[int] = set()

    def produce(self) -> None:
        self.produced = min(len(self.records), self.produced + 1)

    def consume(self) -> None:
        fold = self.fold
        if fold.position + 1 < self.produced:
            fold.consume(self.records[fold.position + 1])
            fold.new_pending.clear()
            fold.overlaps.clear()

    def replicate(self, upto: int) -> None:
        if self.produced:
            end = min(upto, self.produced)
            replicate(self.store, self.records[:end])

    def poll(self) -> None:
        pointer = self.store.pointer2(TOPIC, 0)
        if pointer is not None:  # pointer2, then the quarantined journals, as the follower reads
            self.fold.replicated_up_to(pointer)
            self.fold.quarantines_known(self.store.quarantined_ids(TOPIC), pointer)

    def list(self) -> None:
        """The listing reads the next journal's head (each at a moment of its own)."""
        known = self.fold.known
        if known is None or known.listed:
            return
        key = KEYS[self.listed]
        if self.store.heads([key])[0] is not None:
            known.add(key.id)
        self.listed += 1
        if self.listed == len(KEYS):  # the log's end, read after the last head
            known.complete({0: self.produced})

    def start(self) -> None:
        fold = self.fold
        ids = [
            id_
            for id_, waiting in fold.pending.items()
            if all(r.waits.get(id_) is not waiting for r in self.rounds)
        ]
        if not ids:
            return
        begins = {id_: fold.begin(id_) for id_ in ids}
        known = fold.quarantined_ids  # a journal's quarantine rows are read only if listed
        keys = [Key(TOPIC, id_) for id_ in ids]
        heads = dict(zip(ids, self.store.heads(keys), strict=True))
        quarantined = {
            id_: next(iter(self.store.quarantined(TOPIC, id_)), None) if id_ in known else None
            for id_ in ids
        }
        waits = {id_: fold.pending[id_] for id_ in ids}
        unmet = {id_: fold.unmet(id_) for id_ in ids}
        self.rounds.append(_Round(ids, waits, begins, heads, quarantined, self.produced, unmet))

    def finish(self) -> bool:
        if not self.rounds or self.fold.position < self.rounds[0].end - 1:
            return False
        round_ = self.rounds.pop(0)
        fold = self.fold
        for id_ in round_.ids:
            if fold.pending.get(id_) is not round_.waits[id_]:
                continue  # given up meanwhile, and perhaps met again: a later round starts it
            begin, unbuffered = round_.begins[id_]
            earlier: list[ActionRecord | Poison] = []
            if unbuffered is not None:
                raws = self.records[unbuffered[0] : unbuffered[1]]
                earlier = [
                    item
                    for raw in raws
                    if raw.key == id_.encode() and (item := decoded(raw)) is not None
                ]
            window = [*earlier, *fold.window(id_, round_.end)]
            start = start_of(
                Key(TOPIC, id_),
                0,
                round_.heads[id_],
                round_.quarantined[id_],
                begin,
                window,
                round_.unmet[id_],
            )
            if round_.heads[id_] is None and not round_.unmet[id_]:
                self.undecidable |= {
                    item.offset for item in window if item.offset < start.exact_from
                }
            fold.install(id_, start, earlier)
        return True

    def drain(self) -> None:
        while self.fold.position + 1 < len(self.records) or self.fold.pending or self.rounds:
            self.produced = len(self.records)
            self.consume()
            self.start()
            self.finish()


def _check(run: _Run, ops: list[Op], *, every_record: bool) -> None:
    """Each fate the fold decided against the rule's, folded from the log's start (tests/support/
    histories.py): a dropped append over seqNrs its journal held is reported as the kind comparing
    its events gives, the fold says OVERLAP."""
    model, _ = judge(ops)
    fold = run.fold
    for offset in range(fold.start, len(ops)):
        want = model[offset]
        found = fold.fates.get(offset)
        if want is None:
            assert found is None, (offset, found)
            continue
        assert found is not None, f"offset {offset}: no fate"
        if found.kind is FateKind.UNKNOWN:
            assert not every_record or offset in run.undecidable, (
                f"offset {offset}: unknown, though replication was behind"
            )
            continue
        kind, seq_nr = want
        if found.kind is FateKind.OVERLAP:
            assert kind in (FateKind.REPLAY, FateKind.REFUSED, FateKind.CONFLICT), offset
            assert found.seq_nr == seq_nr, offset
            continue
        if kind is FateKind.PARKED:
            assert found.kind is FateKind.PARKED, (offset, found)
            continue
        assert (found.kind, found.seq_nr) == (kind, seq_nr), (offset, found, ops)


_ops = st.lists(
    st.one_of(
        st.builds(
            lambda key, first, length, variant, expect: Op(
                key, "append", first, first + length, variant, expect
            ),
            st.sampled_from(KEYS),
            st.integers(1, 6),
            st.integers(0, 2),
            st.integers(0, 1),
            st.one_of(st.none(), st.integers(0, 6)),
        ),
        st.builds(d, st.integers(1, 8), st.sampled_from(KEYS)),
        st.builds(lambda key: Op(key, "purge"), st.sampled_from(KEYS)),
        st.builds(lambda key: Op(key, "mark"), st.sampled_from(KEYS)),
        st.builds(
            lambda key, kind: Op(key, kind, 1, 1),
            st.sampled_from(KEYS),
            st.sampled_from(["bad-header", "bad-payload"]),
        ),
    ),
    min_size=1,
    max_size=30,
).map(
    lambda ops: [
        op
        if op.expect is None or op.expect == 0 or op.first == op.expect + 1
        else Op(
            op.key,
            op.kind,
            op.expect + 1,
            op.expect + 1 + (op.last - op.first),
            op.variant,
            op.expect,
        )
        for op in ops
    ]
)

_steps = st.lists(
    st.one_of(
        st.sampled_from(["produce", "consume", "poll", "start", "finish"]),
        st.integers(0, 30),  # replicate up to this many records
    ),
    max_size=120,
)
# The steps, either without the journals listed, or with the listing's reads of the three
# journals' heads among them, early (each at a moment of its own, while replication runs).
_runs = st.one_of(
    st.tuples(st.just(False), _steps),
    st.tuples(
        st.just(True),
        st.tuples(_steps, st.lists(st.integers(0, 30), min_size=3, max_size=3)).map(
            lambda both: _with_listing(*both)
        ),
    ),
)


def _with_listing(steps: list[str | int], at: list[int]) -> list[str | int]:
    steps = list(steps)
    for index in sorted(at, reverse=True):
        steps.insert(min(index, len(steps)), "list")
    return steps


@settings(max_examples=800, deadline=None)
@given(_ops, st.integers(0, 30), _runs, st.integers(1, 3), st.integers(1, 40))
def test_every_fate_the_fold_decides_is_the_rules_whatever_replication_does(
    ops: list[Op],
    replicated: int,
    run_steps: tuple[bool, list[str | int]],
    max_journals: int,
    max_pending: int,
) -> None:
    """With journals evicted (at most `max_journals`) and starts given up (more records than
    `max_pending` waiting for them) too; with the journals listed, heads created while the
    listing runs (replication ahead of the fold) are missed by it or not, and a journal met again
    after its eviction is not new."""
    listing, steps = run_steps
    run = _Run(ops, min(replicated, len(ops)), max_journals, max_pending, listing=listing)
    for step in steps:
        if isinstance(step, int):
            run.replicate(step)
        else:
            getattr(run, step)()
    run.drain()
    _check(run, ops, every_record=False)


@settings(max_examples=600, deadline=None)
@given(_ops, st.integers(0, 30), _runs, st.integers(1, 3))
def test_with_replication_behind_the_fold_every_record_is_decided(
    ops: list[Op], replicated: int, run_steps: tuple[bool, list[str | int]], max_journals: int
) -> None:
    listing, steps = run_steps
    run = _Run(ops, min(replicated, len(ops)), max_journals, listing=listing)
    for step in steps:
        if isinstance(step, int):
            # Only what the fold decided, and only while no journal waits for its start.
            if not run.fold.pending and not run.rounds:
                run.replicate(min(step, run.fold.position + 1))
        else:
            getattr(run, step)()
    run.drain()
    _check(run, ops, every_record=True)


@pytest.mark.parametrize(
    ("replicated_first", "met_before", "exact"),
    [(0, False, True), (1, False, False), (0, True, False)],
    ids=["whole partition, first meeting", "fold started later", "met before, evicted"],
)
def test_a_journal_first_met_in_a_partition_folded_from_offset_zero_is_exact_whatever_its_head(
    replicated_first: int, met_before: bool, exact: bool
) -> None:
    """Replication runs ahead of the journal's start, so Cassandra's head already holds the
    append the fold met first (head at B). Had the fold consumed the partition from its first
    record and never met the journal, the journal did not exist before B: that append is decided
    too. Otherwise the records the head holds are the slow path's to tell (and a refused
    condition among them, which reads cannot tell, was a 504 in the race test)."""
    other, key = KEYS[1], KEYS[0]
    ops = [a(1, key=other), a(1, key=key), a(3, expect=2, key=key), a(2, key=other)]
    run = _Run(ops, replicated_first, max_journals=1, listing=True)  # never listed
    first = run.fold.start
    if met_before:  # the journal was met, then evicted by the other
        assert run.fold.known is not None
        run.fold.known.add(key.id)
    for _ in ops[first:]:
        run.produce()
    while run.fold.position + 1 < len(ops):
        run.consume()
    run.replicate(len(ops))  # the head of `key` is at offset 2 now
    run.start()
    assert run.finish()
    run.drain()
    fates = {offset: run.fold.fates[offset].kind for offset in (1, 2)}
    # the refused append left the head at offset 1: only the taken one is the head's to hold
    assert fates == {1: FateKind.TAKEN if exact else FateKind.UNKNOWN, 2: FateKind.REFUSED}


def test_a_journal_the_listing_shows_cannot_exist_is_decided_without_a_start() -> None:
    """Once listed, a journal with no head that the fold never met is decided as it is
    consumed; one with a head, or met before (evicted since), waits for its start."""
    ops = [
        a(1, key=KEYS[0]),
        a(1, key=KEYS[1]),
        a(2, key=KEYS[1]),
        a(1, key=KEYS[2]),
        a(2, key=KEYS[0]),
    ]
    run = _Run(ops, 1, max_journals=1, listing=True)  # KEYS[0]'s head is in Cassandra
    for _ in KEYS:
        run.list()
    assert run.fold.known is not None
    assert run.fold.known.listed
    for _ in range(2):
        run.produce()
        run.consume()
    assert run.fold.pending == {}
    assert run.fold.fates[1].kind is FateKind.TAKEN
    assert run.fold.fates[2].kind is FateKind.TAKEN
    assert run.fold.started_new == 1  # KEYS[1]
    run.produce()
    run.consume()  # KEYS[2] is new too, and evicts KEYS[1]
    assert run.fold.fates[3].kind is FateKind.TAKEN
    run.produce()
    run.consume()  # KEYS[0] has a head: it waits for a start
    assert list(run.fold.pending) == [KEYS[0].id]
    assert run.fold.want(KEYS[1].id)  # met before, evicted since: only Cassandra knows it
    run.drain()
    assert run.fold.fates[4].kind is FateKind.TAKEN
    assert run.fold.started_new == 2
    _check(run, ops, every_record=True)


@pytest.mark.parametrize(
    "ops",
    [
        [a(1, key=KEYS[0]), Op(KEYS[0], "purge")],
        [a(1, key=KEYS[0]), a(2, key=KEYS[0]), Op(KEYS[0], "purge")],
    ],
    ids=["the purge met first", "an append before the purge met first"],
)
def test_a_journal_whose_purge_was_replicated_while_the_listing_ran_is_not_taken_for_new(
    ops: list[Op],
) -> None:
    """The journal had a head when the folds started (from offset 1); the replicator applied its
    purge before the listing read that head, so the listing does not show it. The fold meets it
    below the log's end as the listing completed: only Cassandra can tell its past, so it is
    started from there, and its records are not decided as a new journal's (a purge of nothing,
    an append refused for a gap)."""
    run = _Run(ops, 1, max_journals=1, listing=True)
    for _ in ops[1:]:
        run.produce()
    run.replicate(len(ops))  # the purge removed the head
    for _ in KEYS:
        run.list()
    assert run.fold.known is not None
    assert not run.fold.known.may_exist(KEYS[0].id)
    run.consume()
    assert list(run.fold.pending) == [KEYS[0].id]
    run.drain()
    assert run.fold.started_new == 0
    _check(run, ops, every_record=True)


def test_a_journal_quarantined_in_cassandra_has_its_records_before_the_poison_decided() -> None:
    """The replicator quarantined the journal at offset 1 before the fold started it: the
    record at offset 0 is decided as any (a delete of no journal), only those from 1 are parked."""
    ops = [d(1, KEYS[0]), Op(KEYS[0], "bad-header", 1, 1)]
    run = _Run(ops, 0, 1)
    run.produce()
    run.produce()
    run.replicate(2)
    run.poll()
    run.drain()
    assert run.fold.fates[0].kind is FateKind.NOTHING
    assert run.fold.fates[1].kind is FateKind.PARKED
    _check(run, ops, every_record=True)


def test_resends_of_one_append_are_kept_for_comparison_without_folding_the_tail_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client resending one append many times: each resend is an OVERLAP whose comparison
    waits until its outcome is asked. Consuming them folds nothing again (folding the journal's
    tail per resend made the fold quadratic: a reader stalled for a minute on 5,000 of them),
    and what each resend met is still there when asked: the journal at seqNr 1, the resends
    before it dropped."""
    resends = 300
    ops = [a(1)] + [a(1)] * resends
    run = _Run(ops, 0, 1)
    folded: list[int] = []
    real = PartitionFold.head_info

    def counting(base: Base, tail: Tail) -> HeadInfo:
        folded.append(len(tail.actions))
        return real(base, tail)

    monkeypatch.setattr(PartitionFold, "head_info", staticmethod(counting))
    for _ in ops:
        run.produce()
    run.drain()
    assert folded == []
    assert all(run.fold.fates[offset].kind is FateKind.OVERLAP for offset in range(1, resends + 1))
    overlap = run.fold.overlap(resends)
    assert overlap is not None
    met = overlap.before()
    assert met is not None
    before, info = met
    assert [record.offset for record in before.actions] == list(range(resends))
    assert info.seq_nr == 1
    assert info.dropped == tuple(range(1, resends))
    run.fold.compared(resends)
    assert run.fold.overlap(resends) is None
