"""Dropped appends: which appends of a slice the append rule drops, and what each one was.

In offset order, each append is taken or dropped whole by the append rule
(fold/append_rule.py), the rule the read side and the writer's outcome apply too. A dropped append
is never applied. A replay (a retry: the same events as the journal holds) changes nothing; a
refusal (its condition failed) was answered 412 to its writer; a gap (it skips more than
`MAX_GAP` seqNrs) was answered 409 and is logged; a conflict (an unconditional append over seqNrs
the journal holds, with other content) was answered 409 and is also recorded in the store, one
row per repeated event (its offset and the kept event's), counted and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from kjournal.fold.append_rule import MAX_GAP
from kjournal.fold.append_rule import Dropped
from kjournal.fold.append_rule import dropped_kind
from kjournal.fold.append_rule import same_content
from kjournal.fold.append_rule import takes
from kjournal.fold.head_info import HeadInfo
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import Purge
from kjournal.model import SeqRange
from kjournal.model.conflict import Conflict
from kjournal.model.head import JournalHead
from kjournal.ports import ReplicatedStore
from kjournal.replicate.collect import Decoded

__all__ = ["DroppedAppend", "Verdicts", "classify_dropped", "taken"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DroppedAppend:
    """An append the append rule drops: its events, and the journal's kept events of this slice
    for the seqNrs it repeats (those not here are looked up in the store)."""

    events: tuple[EventRecord, ...]
    expect: int | None
    seq_nr: int  # the journal's seqNr when the append came (0: no journal)
    kept: dict[int, EventRecord]


@dataclass(slots=True)
class Verdicts:
    """What one journal's dropped appends were."""

    events: int = 0  # their events
    refused: int = 0  # appends whose condition failed
    gaps: int = 0  # appends that skipped more than MAX_GAP seqNrs
    conflicts: int = 0  # appends that were conflicts
    rows: list[Conflict] = field(default_factory=list)  # the conflicts' rows


def taken(
    actions: Sequence[ActionRecord], head: JournalHead | None, decoded: Mapping[int, Decoded]
) -> tuple[list[ActionRecord], list[DroppedAppend]]:
    """`actions` without the appends the append rule drops (fold/append_rule.py), folded in
    offset order as the read side folds them, and the dropped ones."""
    covered = -1 if head is None else head.partition_offset.offset
    info = HeadInfo.of_head(head)
    kept_here: dict[int, EventRecord] = {}  # this slice's taken events, by seqNr
    result: list[ActionRecord] = []
    dropped: list[DroppedAppend] = []
    for record in actions:
        action = record.action
        if record.offset <= covered:
            result.append(record)  # the head covers it: planning skips it
            continue
        if isinstance(action, Append):
            events = decoded[record.offset].events
            if not takes(info.seq_nr, action.header.range.from_, action.header.expect):
                seq_nr = info.seq_nr or 0
                repeated: dict[int, EventRecord] = {
                    e.seq_nr: kept_here[e.seq_nr] for e in events if e.seq_nr in kept_here
                }
                dropped.append(DroppedAppend(events, action.header.expect, seq_nr, repeated))
                info = info.apply(record)
                continue
            kept_here.update((event.seq_nr, event) for event in events)
        elif isinstance(action, Purge):
            kept_here.clear()
        info = info.apply(record)
        result.append(record)
    return result, dropped


def classify_dropped(
    key: Key,
    head: JournalHead | None,
    dropped: Sequence[DroppedAppend],
    store: ReplicatedStore,
    now: datetime,
) -> Verdicts:
    """Sort each of a journal's dropped appends into replay, refusal, gap or conflict
    (fold/append_rule.py) by comparing it with the events the journal keeps (from this slice,
    else from the store, whose `head` is as loaded before the slice). A repeated event without a
    kept counterpart (a delete removed it, or the journal never held its seqNr) is not
    identical: as the writer's answer, which never calls a replay what no reader returns."""
    verdicts = Verdicts()
    missing = {
        e.seq_nr
        for d in dropped
        for e in d.events
        if e.seq_nr <= d.seq_nr and e.seq_nr not in d.kept
    }
    stored = store.stored_events(key, head, missing) if missing and head is not None else {}
    for append in dropped:
        kept = [(e, append.kept.get(e.seq_nr) or stored.get(e.seq_nr)) for e in append.events]
        identical = append.events[-1].seq_nr <= append.seq_nr and all(
            other is not None and same_content(event, other) for event, other in kept
        )
        kind = dropped_kind(
            identical, append.expect, append.events[0].seq_nr, append.seq_nr or None
        )
        verdicts.events += len(append.events)
        if kind is Dropped.REFUSED:
            verdicts.refused += 1
        if kind is Dropped.GAP:
            verdicts.gaps += 1
            log.warning(
                "journal %s: the append of seqNrs from %d skips more than %d seqNrs of a "
                "journal at seqNr %d; it is dropped",
                key,
                append.events[0].seq_nr,
                MAX_GAP,
                append.seq_nr,
            )
        if kind is not Dropped.CONFLICT:
            continue
        verdicts.rows += [
            Conflict(
                topic=key.topic,
                id=key.id,
                seq_nr=event.seq_nr,
                dropped=event.partition_offset,
                kept=other.partition_offset,
                detected_at=now,
            )
            for event, other in kept
            if other is not None
        ]
        verdicts.conflicts += 1
        log.warning(
            "journal %s: the append at offset %d repeats seqNr %s of a journal at seqNr %d "
            "with other content; it is dropped and recorded as a conflict",
            key,
            append.events[0].partition_offset.offset,
            SeqRange(append.events[0].seq_nr, append.events[-1].seq_nr),
            append.seq_nr,
        )
    return verdicts
