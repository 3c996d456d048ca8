"""Collecting a slice (steps 1 and 2 of `slice.py`): the records above `pointer2`, their headers
decoded and grouped by journal, and the payload decoding of step 3. What cannot be decoded is
kept raw for the quarantine (`quarantine.py`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field

from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.wire.append_events import DECODE_ERRORS
from kjournal.wire.append_events import Decoded
from kjournal.wire.append_events import decode_append
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import decode_action_record

__all__ = ["Decoded", "JournalSlice", "Slice", "collect", "decode_payload"]


@dataclass(slots=True)
class JournalSlice:
    """One journal's part of the slice, in offset order, as collected (planning only reads it)."""

    key: Key
    decoded: list[ActionRecord] = field(default_factory=list)  # before any bad header
    raw: dict[int, ConsumedRecord] = field(default_factory=dict)  # offset → record
    poison: tuple[ConsumedRecord, str] | None = None  # the first undecodable header, and why
    behind: list[tuple[ConsumedRecord, str | None]] = field(default_factory=list)  # after it

    def actions_after(self, offset: int) -> list[ActionRecord]:
        return [action for action in self.decoded if action.offset > offset]


@dataclass(slots=True)
class Slice:
    journals: dict[str, JournalSlice] = field(default_factory=dict)
    count: int = 0
    ignored: int = 0
    max_offset: int | None = None
    newest_timestamp_ms: int | None = None


def collect(
    topic: str, partition: int, records: Iterable[ConsumedRecord], pointer: int | None
) -> Slice:
    slice_ = Slice()
    previous = -1
    for record in records:
        if record.topic != topic or record.partition != partition:
            raise ValueError(
                f"record of {record.topic}:{record.partition} in the slice of {topic}:{partition}"
            )
        if record.offset <= previous:
            raise ValueError(f"records out of order: offset {record.offset} after {previous}")
        previous = record.offset
        if pointer is not None and record.offset <= pointer:
            continue
        slice_.count += 1
        slice_.max_offset = record.offset
        if record.timestamp_ms is not None and record.timestamp_ms >= 0:
            slice_.newest_timestamp_ms = record.timestamp_ms

        error: str | None = None
        action: ActionRecord | None = None
        try:
            action = decode_action_record(record)
        except DECODE_ERRORS as exc:
            error = f"header: {exc}"
        if action is None and error is None:
            slice_.ignored += 1
            continue

        id = action.action.key.id if action is not None else _record_id(record)
        journal = slice_.journals.get(id)
        if journal is None:
            journal = slice_.journals[id] = JournalSlice(Key(topic, id))
        journal.raw[record.offset] = record
        if journal.poison is None and action is not None:
            journal.decoded.append(action)
        elif journal.poison is None and error is not None:
            journal.poison = (record, error)
        elif action is None or not isinstance(action.action, Mark):
            journal.behind.append((record, error))
    return slice_


def _record_id(record: ConsumedRecord) -> str:
    """The journal id of a record whose header could not be decoded."""
    assert record.key is not None  # keyless records are ignored before their header is read
    return record.key.decode("utf-8", "replace")  # as decode_action_record


def decode_payload(record: ActionRecord, action: Append) -> Decoded | str:
    """The append's events as rows will hold them, or why its payload is poison."""
    try:
        return decode_append(action, record.partition_offset)
    except DECODE_ERRORS as exc:
        return f"payload: {exc}"
