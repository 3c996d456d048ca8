"""What a topic feed delivers: events, control entries, and the end of a catch-up; as JSON lines.

Every entry carries the cursor to resume from right after it. Events are the events of appends
the journal's append rule takes; control entries say what happened to a journal at a position:
`delete` (events up to `to` are gone), `purge` (the journal is gone; its next append starts a new
one), `quarantined` (a record that cannot be decoded, or one of its journal's records parked
behind it). `end` closes a catch-up with the cursor of the end offsets it read to; `heartbeat`
tells a live follower, now and then, that nothing came, with the cursor it may resume from.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any
from typing import TypeAlias

from kjournal.api.convert import event_json
from kjournal.api.convert import event_record_to_json
from kjournal.api.convert import record_json
from kjournal.api.schemas import format_timestamp
from kjournal.feed.cursor import Cursor
from kjournal.feed.cursor import CursorFrame
from kjournal.model import EventRecord

__all__ = [
    "AppendEvents",
    "AppendLines",
    "Control",
    "DeliveredEvents",
    "FeedControl",
    "FeedEnd",
    "FeedEntry",
    "FeedEvent",
    "FeedHeartbeat",
    "RecordEntries",
    "entry_to_json",
]


class Control(Enum):
    DELETE = "delete"
    PURGE = "purge"
    QUARANTINED = "quarantined"


@dataclass(frozen=True, slots=True)
class FeedEvent:
    id: str
    record: EventRecord
    index: int  # the event's place in its append (0 for the first)
    cursor: Cursor


@dataclass(frozen=True, slots=True)
class FeedControl:
    kind: Control
    id: str
    partition: int
    offset: int
    timestamp: datetime | None
    cursor: Cursor
    to: int | None = None  # a delete's deleteTo, as it takes effect
    reason: str | None = None  # why a record is quarantined


@dataclass(frozen=True, slots=True)
class FeedEnd:
    cursor: Cursor


@dataclass(frozen=True, slots=True)
class FeedHeartbeat:
    cursor: Cursor


FeedEntry: TypeAlias = FeedEvent | FeedControl | FeedEnd | FeedHeartbeat


@dataclass(frozen=True, slots=True)
class AppendEvents:
    """The events a feed delivers of one append: `records[i]` for each i of `indexes`, as
    FeedEvents (`entries`) or as the members of their lines (`lines_json`). A catch-up writes
    the lines straight from these, without a FeedEvent or Cursor per event: the record's
    members once, and each event's cursor as text from `frame`."""

    id: str
    records: tuple[EventRecord, ...]  # all the append's events (an entry each)
    indexes: tuple[int, ...]  # those delivered (past a cursor's skip, with a wanted tag)
    frame: CursorFrame
    offset: int

    def __len__(self) -> int:
        return len(self.indexes)

    def entries(self) -> list[FeedEvent]:
        count, frame, offset = len(self.records), self.frame, self.offset
        return [
            FeedEvent(self.id, self.records[index], index, frame.after_event(offset, index, count))
            for index in self.indexes
        ]

    def lines_json(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the members every line shares, each line's own members): `{**own, **shared}` is
        `entry_to_json` of each of `entries()`."""
        count, frame, offset, records = len(self.records), self.frame, self.offset, self.records
        own: list[dict[str, Any]] = []
        for index in self.indexes:
            line = event_json(records[index].event)
            line["index"] = index
            line["cursor"] = frame.text_after_event(offset, index, count)
            own.append(line)
        return {"type": "event", "id": self.id, **record_json(records[0])}, own


@dataclass(frozen=True, slots=True)
class AppendLines:
    """The events a catch-up delivers of an append in a plain JSON container, as
    feed/plain_json.py read them: the record's members (`shared`) and each event's own
    (`events`), for each i of `indexes`. Its lines are AppendEvents' lines of the same append;
    `entries()` decodes the append the full way (`decoded`)."""

    id: str
    shared: dict[str, Any]
    events: list[dict[str, Any]]  # all the append's events' own members
    indexes: tuple[int, ...]
    frame: CursorFrame
    offset: int
    decoded: Callable[[], tuple[EventRecord, ...]]

    def __len__(self) -> int:
        return len(self.indexes)

    def entries(self) -> list[FeedEvent]:
        records = self.decoded()
        return AppendEvents(self.id, records, self.indexes, self.frame, self.offset).entries()

    def lines_json(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """As AppendEvents.lines_json (each event's members completed in place, once)."""
        count, frame, offset, events = len(self.events), self.frame, self.offset, self.events
        own: list[dict[str, Any]] = []
        for index in self.indexes:
            line = events[index]
            line["index"] = index
            line["cursor"] = frame.text_after_event(offset, index, count)
            own.append(line)
        return {"type": "event", "id": self.id, **self.shared}, own


DeliveredEvents: TypeAlias = AppendEvents | AppendLines
"""An append's delivered events, decoded or as read from a plain JSON container."""

RecordEntries: TypeAlias = AppendEvents | AppendLines | Sequence[FeedEntry]
"""What a feed delivers of one record: an append's events, or a control entry (or nothing)."""


def entry_to_json(entry: FeedEntry) -> dict[str, Any]:
    """One line of a feed (the shape of api.schemas.FeedEntryOut)."""
    if isinstance(entry, FeedEvent):
        return {
            "type": "event",
            "id": entry.id,
            "index": entry.index,
            **event_record_to_json(entry.record),
            "cursor": entry.cursor.encode(),
        }
    if isinstance(entry, FeedEnd):
        return {"type": "end", "cursor": entry.cursor.encode()}
    if isinstance(entry, FeedHeartbeat):
        return {"type": "heartbeat", "cursor": entry.cursor.encode()}
    line: dict[str, Any] = {
        "type": entry.kind.value,
        "id": entry.id,
        "partition": entry.partition,
        "offset": entry.offset,
        "timestamp": None if entry.timestamp is None else format_timestamp(entry.timestamp),
    }
    if entry.kind is Control.DELETE:
        line["to"] = entry.to
    if entry.kind is Control.QUARANTINED:
        line["reason"] = entry.reason
    line["cursor"] = entry.cursor.encode()
    return line
