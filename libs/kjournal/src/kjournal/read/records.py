"""A journal record as the read side's fold takes it: its action, or why it does not decode."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kjournal.errors import FormatError
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.wire.append_events import poison_reason
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import decode_action_record

__all__ = ["Poison", "decoded"]


@dataclass(frozen=True, slots=True)
class Poison:
    """A record of a journal that does not decode (its header or its payload): the replicator
    quarantines the journal there."""

    offset: int
    reason: str
    timestamp: datetime | None = None


def decoded(raw: ConsumedRecord) -> ActionRecord | Poison | None:
    """The record's action, or why the replicator quarantines it (its header or, for an
    append, its payload does not decode); None for records readers and the replicator skip."""
    try:
        record = decode_action_record(raw)
    except FormatError as exc:
        return Poison(raw.offset, str(exc))
    if record is None:
        return None
    action = record.action
    if isinstance(action, Append):
        reason = poison_reason(action)
        if reason is not None:
            return Poison(raw.offset, reason, action.timestamp)
    return record
