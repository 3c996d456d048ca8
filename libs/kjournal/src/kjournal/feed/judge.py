"""Judging one record of a journal for the feed, with the append rule the journal's readers use.

Pure: the journal's state before the record in, what to deliver and the state after out. An
append is delivered when the append rule (fold/append_rule.py) takes it, never otherwise; a
delete or purge of a journal that exists is delivered as a control entry (of one that does not,
the replicator ignores it, and so does the feed); marks are never delivered. A journal
quarantined by an earlier record has its later records parked (feed/states.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kjournal.feed.entries import Control
from kjournal.feed.states import JournalState
from kjournal.fold.append_rule import takes
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import Purge

__all__ = ["Judged", "Verdict", "judge"]


class Verdict(Enum):
    TAKEN = "taken"  # an append the journal takes: its events are delivered
    DROPPED = "dropped"  # an append the append rule drops: nothing is
    CONTROL = "control"  # a delete or purge with an effect: a control entry
    NOTHING = "nothing"  # a mark, or a delete or purge of no journal
    PARKED = "parked"  # a record of a quarantined journal: a quarantined entry


@dataclass(frozen=True, slots=True)
class Judged:
    verdict: Verdict
    state: JournalState  # the journal after the record
    control: Control | None = None
    to: int | None = None  # a delete's deleteTo after it


def judge(state: JournalState, record: ActionRecord) -> Judged:
    if state.quarantined_at is not None:
        return Judged(Verdict.PARKED, state, Control.QUARANTINED)
    action = record.action
    after = state.apply(record)
    if isinstance(action, Append):
        header = action.header
        taken = takes(state.info.seq_nr, header.range.from_, header.expect)
        return Judged(Verdict.TAKEN if taken else Verdict.DROPPED, after)
    if not state.info.exists:
        return Judged(Verdict.NOTHING, after)
    if isinstance(action, Delete):
        return Judged(Verdict.CONTROL, after, Control.DELETE, after.info.delete_to)
    if isinstance(action, Purge):
        return Judged(Verdict.CONTROL, after, Control.PURGE)
    return Judged(Verdict.NOTHING, after)
