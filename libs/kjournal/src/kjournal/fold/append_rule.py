"""The append rule: whether a journal takes an append, as a pure function of the journal's state.

Every part that folds a journal's records applies this one rule, in offset order: the read side's
head info (`fold.head_info`), the replicator (`replicate`), the outcome the writer waits for
before answering (`outcome`). So an append that one of them takes, all of them take, and an append
answered 201 is what every reader returns (docs/concurrency.md).

An append of seqNrs `first..last` with an optional condition `expect` is taken when

* `expect` is None (unconditional): the journal does not exist, or `first` is above its seqNr
  by at most `MAX_GAP` + 1 (it skips at most `MAX_GAP` seqNrs);
* `expect` is 0 (`If-None-Match: *`): the journal does not exist (never written, or purged);
* `expect` is p ≥ 1 (`If-Match: "p"`): the journal's seqNr is p and `first` is p + 1.

Otherwise the whole append is dropped, never a part of it. A dropped append is one of four kinds,
which matter for the answer, not for the journal: a *replay* repeats events the journal holds
(same seqNrs, same content: a retry), a *refusal* failed its condition, a *conflict* is an
unconditional append over seqNrs the journal holds with other content, a *gap* skips more than
`MAX_GAP` seqNrs.
"""

from __future__ import annotations

from enum import Enum

from kjournal.model import EventRecord
from kjournal.model import SeqNr

__all__ = ["MAX_GAP", "Dropped", "dropped_kind", "same_content", "takes"]

MAX_GAP = 100_000
"""How many seqNrs an unconditional append may skip above the journal's seqNr. Reads, deletes
and purges walk a journal's Cassandra segments one by one (the schema shared with kafka-journal
keeps no index of them), so an unbounded gap, 1 then 2^63 - 1, would leave ~10^14 empty segments
to walk. Bounded, each append adds at most a segment's worth of emptiness (kafka-journal's
default segment size is 100,000). A journal that does not exist may start at any seqNr."""


class Dropped(Enum):
    """Why an append was dropped (the answer to its writer)."""

    REPLAY = "replay"
    REFUSED = "refused"
    CONFLICT = "conflict"
    GAP = "gap"


def takes(seq_nr: SeqNr | None, first: SeqNr, expect: int | None) -> bool:
    """Whether a journal whose seqNr is `seq_nr` (None: it does not exist) takes an append whose
    first seqNr is `first`, under condition `expect` (see the module docstring)."""
    if expect is None:
        return seq_nr is None or seq_nr < first <= seq_nr + 1 + MAX_GAP
    if expect == 0:
        return seq_nr is None
    return seq_nr == expect and first == expect + 1


def dropped_kind(identical: bool, expect: int | None, first: int, seq_nr: int | None) -> Dropped:
    """The kind of a dropped append whose first seqNr is `first`, met by a journal at `seq_nr`: a
    replay if it repeats the journal's events exactly, else a refusal if it had a condition, else
    a gap if it starts above the journal's seqNr (so it skipped too many), else a conflict."""
    if identical:
        return Dropped.REPLAY
    if expect is not None:
        return Dropped.REFUSED
    return Dropped.GAP if seq_nr is not None and first > seq_nr else Dropped.CONFLICT


def same_content(a: EventRecord, b: EventRecord) -> bool:
    """Whether two events are the same to a writer: what a client's retry repeats (the event,
    its metadata and its user headers), not where or when it was written."""
    return (
        a.event.payload == b.event.payload
        and a.event.tags == b.event.tags
        and a.metadata == b.metadata
        and dict(a.headers) == dict(b.headers)
    )
