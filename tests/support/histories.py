"""Histories of journal actions, and the append rule written out naively: what the read side's
model tests (tests/unit/read, tests/unit/feed) build their cases from and check against.

An `Op` is one action of one journal; `log_of` encodes a history into an in-memory partition log
(tests/support/memory_read.py), one record per op at offsets 0, 1, …; `judge` folds a history by
the append rule as `NaiveJournal` states it, independently of kjournal/fold/append_rule.py.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime

from hypothesis import strategies as st
from kjournal.fold.append_rule import MAX_GAP
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import ACTION_HEADER
from kjournal.model import Action
from kjournal.model import Delete
from kjournal.model import DeleteHeader
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.model import Purge
from kjournal.model import PurgeHeader
from kjournal.model import SeqNr
from kjournal.read.fates import FateKind
from kjournal.replicate import replicate_partition
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action

from tests.support.memory_read import InMemoryPartitionLog

TOPIC = "journal"
KEY = Key(TOPIC, "entity")
OTHER = Key(TOPIC, "other")
NOW = datetime(2026, 11, 22, tzinfo=UTC)  # the replicator's clock


@dataclass(frozen=True)
class Op:
    key: Key
    kind: str  # append | delete | purge | mark; bad-header | bad-payload: a poison record
    first: int = 0
    last: int = 0  # an append's last seqNr; a delete's bound
    variant: int = 0  # an append's payloads differ from another's of the same seqNrs by it
    expect: int | None = None  # an append's condition (fold/append_rule.py)


def a(
    first: int,
    last: int | None = None,
    variant: int = 0,
    expect: int | None = None,
    key: Key = KEY,
) -> Op:
    """An append of seqNrs `first`..`last` (`first` alone if no `last`)."""
    return Op(key, "append", first, first if last is None else last, variant, expect)


retry = a  # an append of seqNrs the journal may hold already (a resend, or an overlap)


def d(to: int, key: Key = KEY) -> Op:
    return Op(key, "delete", last=to)


PURGE = Op(KEY, "purge")
MARK = Op(KEY, "mark")
NOISE = a(1, 3, key=OTHER)  # another journal's append


def payload(key: Key, n: int, variant: int) -> dict[str, JsonValue]:
    return {"n": n, "key": key.id, "variant": variant}


def _action(op: Op, offset: int) -> Action:
    timestamp = datetime.fromtimestamp(1_700_000_000 + offset, UTC)
    if op.kind in ("append", "bad-payload"):
        events = Events(
            tuple(
                Event(SeqNr(n), payload=JsonPayload(payload(op.key, n, op.variant)))
                for n in range(op.first, op.last + 1)
            )
        )
        return append_action(op.key, timestamp, events, expect=op.expect)
    if op.kind == "delete":
        return Delete(op.key, timestamp, DeleteHeader(SeqNr(op.last)))
    if op.kind == "purge":
        return Purge(op.key, timestamp, PurgeHeader())
    return Mark(op.key, timestamp, MarkHeader(f"m{offset}"))


def log_of(ops: Sequence[Op], payload_budget: int = 1 << 30) -> InMemoryPartitionLog:
    """The ops as the records of a one-partition topic, op i at offset i (a bad-header op: an
    action header that is no JSON; a bad-payload op: an append whose value is no container)."""
    log = InMemoryPartitionLog(TOPIC, 1, payload_budget)
    for offset, op in enumerate(ops):
        parts = encode_action(_action(op, offset))
        headers, value = list(parts.headers), parts.value
        if op.kind == "bad-header":
            headers = [(ACTION_HEADER, b"{not json")]
        elif op.kind == "bad-payload":
            value = b'{"events": "not a list"}'
        log.append(parts.key, value, headers, parts.timestamp_ms)
    return log


def replicate(
    store: InMemoryReplicatedStore, records: Sequence[ConsumedRecord], slices: int = 1
) -> None:
    """Replicate partition 0's `records` into `store` in `slices` calls of the replicator."""
    size = max(1, -(-len(records) // slices))
    for start in range(0, len(records), size):
        replicate_partition(TOPIC, 0, records[start : start + size], store, NOW)


def value(record: EventRecord) -> object:
    """An event's payload value (None: it has none)."""
    return record.event.payload.value if record.event.payload else None


def fully_replicated(log: InMemoryPartitionLog) -> tuple[list[tuple[int, object]], int | None]:
    """KEY's events and seqNr (None: no journal) once every record of the log is replicated."""
    store = InMemoryReplicatedStore()
    replicate(store, log.written[0])
    head = store.head(KEY)
    return [(e.seq_nr, value(e)) for e in store.events(KEY)], None if head is None else head.seq_nr


Judged = tuple[FateKind, int]
"""What the rule makes of a record, and the seqNr the fold reports with it (kjournal/read/fates.py
`Fate.seq_nr`): taken, the journal's seqNr after; dropped, the seqNr it met (0: no journal);
a delete, the deleteTo after it; otherwise 0."""


@dataclass
class NaiveJournal:
    """One journal under the append rule (fold/append_rule.py), naively. In offset order an
    append is taken whole if its condition holds (none: the journal does not exist, or the append
    starts above its seqNr skipping at most MAX_GAP; 0: the journal does not exist; p: the
    journal's seqNr is p and the append starts at p + 1), else dropped whole: a replay if the
    journal holds its events alike, else refused (a condition), a gap (above the journal's
    seqNr) or a conflict. A delete hides up to its bound (never beyond the journal's seqNr); a
    purge starts the journal over; a poison record parks the journal's later records."""

    exists: bool = False
    seq_nr: int = 0
    delete_to: int = 0
    events: dict[int, dict[str, JsonValue]] = field(default_factory=dict)
    parked: bool = False

    def apply(self, op: Op) -> Judged | None:
        """The fate of `op` (None: a mark), and the journal changed by it."""
        if op.kind in ("bad-header", "bad-payload"):
            self.parked = True
        if op.kind == "mark":
            return None
        if self.parked:
            return FateKind.PARKED, 0
        if op.kind == "append":
            return self._append(op)
        if not self.exists:
            return FateKind.NOTHING, 0
        if op.kind == "delete":
            self.delete_to = max(self.delete_to, min(op.last, self.seq_nr))
            return FateKind.DELETE, self.delete_to
        self.exists, self.seq_nr, self.delete_to, self.events = False, 0, 0, {}
        return FateKind.PURGE, 0

    def _append(self, op: Op) -> Judged:
        if op.expect is None:
            taken = not self.exists or self.seq_nr < op.first <= self.seq_nr + 1 + MAX_GAP
        elif op.expect == 0:
            taken = not self.exists
        else:
            taken = self.exists and self.seq_nr == op.expect and op.first == op.expect + 1
        if taken:
            if not self.exists:
                self.exists, self.delete_to = True, op.first - 1
            for n in range(op.first, op.last + 1):
                self.events[n] = payload(op.key, n, op.variant)
            self.seq_nr = op.last
            return FateKind.TAKEN, op.last
        identical = (
            self.exists
            and op.last <= self.seq_nr
            and all(
                n > self.delete_to and self.events.get(n) == payload(op.key, n, op.variant)
                for n in range(op.first, op.last + 1)
            )
        )
        if identical:
            return FateKind.REPLAY, self.seq_nr
        if op.expect is not None:
            return FateKind.REFUSED, self.seq_nr
        if self.exists and op.first > self.seq_nr:
            return FateKind.GAP, self.seq_nr
        return FateKind.CONFLICT, self.seq_nr

    def readable(self) -> list[tuple[int, object]]:
        """The events a read returns, in seqNr order."""
        return [(n, p) for n, p in sorted(self.events.items()) if n > self.delete_to]

    def head(self) -> int | None:
        """The journal's seqNr (None: it does not exist)."""
        return self.seq_nr if self.exists else None


def judge(ops: Sequence[Op]) -> tuple[list[Judged | None], dict[Key, NaiveJournal]]:
    """Each op's fate by the rule, folded from the log's start, and every journal at the end."""
    journals: defaultdict[Key, NaiveJournal] = defaultdict(NaiveJournal)
    return [journals[op.key].apply(op) for op in ops], journals


@st.composite
def _histories(
    draw: st.DrawFn,
    kinds: Sequence[str],
    most: int,
    skip: int,
    past_end: int,
    noise_between: bool,
) -> list[Op]:
    """1 to `most` ops of KEY, each of a kind drawn from `kinds` (one listed twice is drawn twice
    as often): an append starts after the journal's seqNr, skipping up to `skip` seqNrs; a retry
    starts anywhere from 1 to 2 past it; a delete's bound reaches up to `past_end` past it; noise
    is another journal's append, which with `noise_between` may also follow each op."""
    ops: list[Op] = []
    pointer = 0
    for _ in range(draw(st.integers(1, most))):
        kind = draw(st.sampled_from(kinds))
        if kind == "append":
            first = pointer + 1 + draw(st.integers(0, skip))
            last = first + draw(st.integers(0, 3))
            ops.append(a(first, last))
            pointer = last
        elif kind == "retry":
            first = draw(st.integers(1, pointer + 2))
            last = first + draw(st.integers(0, 3))
            ops.append(retry(first, last, variant=draw(st.integers(0, 1))))
            pointer = max(pointer, last)
        elif kind == "delete":
            ops.append(d(draw(st.integers(1, pointer + past_end))))
        elif kind == "purge":
            ops.append(PURGE)
            pointer = 0
        elif kind == "mark":
            ops.append(MARK)
        else:
            ops.append(NOISE)
        if noise_between and draw(st.booleans()):
            ops.append(NOISE)
    return ops


def histories() -> st.SearchStrategy[list[Op]]:
    """Appends that only go on (with small gaps), deletes, purges, marks and noise."""
    kinds = ["append", "append", "append", "delete", "purge", "mark", "noise"]
    return _histories(kinds, most=14, skip=2, past_end=3, noise_between=False)


def histories_with_retries() -> st.SearchStrategy[list[Op]]:
    """Appends, resends and overlaps (with other content too), deletes and purges, among noise."""
    kinds = ["append", "append", "retry", "retry", "delete", "purge"]
    return _histories(kinds, most=16, skip=1, past_end=2, noise_between=True)
