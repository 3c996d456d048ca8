"""The append rule: whether a journal takes an append, as a pure function of the journal's state.

Every part that folds a journal's records applies this one rule, in offset order: the read side's
head info (`fold.head_info`), the replicator (`replicate`), the outcome the writer waits for
before answering (`outcome`). So an append that one of them takes, all of them take, and an append
answered 201 is what every reader returns (docs/concurrency.md).

An append of seqNrs `first..last` with an optional condition `expect` is taken when

* `expect` is None (unconditional): the journal does not exist, or `first` is above its seqNr;
* `expect` is 0 (`If-None-Match: *`): the journal does not exist (never written, or purged);
* `expect` is p ≥ 1 (`If-Match: "p"`): the journal's seqNr is p and `first` is p + 1.

Otherwise the whole append is dropped, never a part of it. A dropped append is one of three kinds,
which matter for the answer, not for the journal: a *replay* repeats events the journal holds
(same seqNrs, same content: a retry), a *refusal* failed its condition, a *conflict* is an
unconditional append over seqNrs the journal holds with other content.
"""

from __future__ import annotations

from enum import Enum

from kjournal.model import EventRecord, SeqNr

__all__ = ["Dropped", "dropped_kind", "same_content", "takes"]


class Dropped(Enum):
    """Why an append was dropped (the answer to its writer)."""

    REPLAY = "replay"
    REFUSED = "refused"
    CONFLICT = "conflict"


def takes(seq_nr: SeqNr | None, first: SeqNr, expect: int | None) -> bool:
    """Whether a journal whose seqNr is `seq_nr` (None: it does not exist) takes an append whose
    first seqNr is `first`, under condition `expect` (see the module docstring)."""
    if expect is None:
        return seq_nr is None or first > seq_nr
    if expect == 0:
        return seq_nr is None
    return seq_nr == expect and first == expect + 1


def dropped_kind(identical: bool, expect: int | None) -> Dropped:
    """The kind of a dropped append: a replay if it repeats the journal's events exactly, else a
    refusal if it had a condition, else a conflict."""
    if identical:
        return Dropped.REPLAY
    return Dropped.CONFLICT if expect is None else Dropped.REFUSED


def same_content(a: EventRecord, b: EventRecord) -> bool:
    """Whether two events are the same to a writer: what a client's retry repeats (the event,
    its metadata and its user headers), not where or when it was written."""
    return (
        a.event.payload == b.event.payload
        and a.event.tags == b.event.tags
        and a.metadata == b.metadata
        and dict(a.headers) == dict(b.headers)
    )
