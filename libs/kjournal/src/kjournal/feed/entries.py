"""What a topic feed delivers: events, control entries, and the end of a catch-up; as JSON lines.

Every entry carries the cursor to resume from right after it. Events are the events of appends
the journal's append rule takes; control entries say what happened to a journal at a position:
`delete` (events up to `to` are gone), `purge` (the journal is gone; its next append starts a new
one), `quarantined` (a record that cannot be decoded, or one of its journal's records parked
behind it). `end` closes a catch-up with the cursor of the end offsets it read to; `heartbeat`
tells a live follower, now and then, that nothing came, with the cursor it may resume from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, TypeAlias

from kjournal.api.convert import event_json, event_record_to_json, record_json
from kjournal.api.schemas import format_timestamp
from kjournal.feed.cursor import Cursor
from kjournal.model import EventRecord

__all__ = [
    "Control",
    "FeedControl",
    "FeedEnd",
    "FeedEntry",
    "FeedEvent",
    "FeedHeartbeat",
    "entry_to_json",
    "shared_event_lines",
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


def shared_event_lines(
    entries: Sequence[FeedEntry],
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """`entries` as (the members all their lines share, each line's own members) when they are
    two or more events of one append, else None. `{**own, **shared}` is `entry_to_json` of each:
    an encoder writes the record's members once for all the append's events."""
    if len(entries) < 2 or not isinstance(entries[0], FeedEvent):
        return None
    first = entries[0]
    record = first.record
    own: list[dict[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, FeedEvent) or entry.id != first.id:
            return None
        other = entry.record
        if (
            other.partition_offset is not record.partition_offset
            or other.metadata is not record.metadata
            or other.headers is not record.headers
            or other.timestamp != record.timestamp
            or other.origin != record.origin
            or other.version != record.version
        ):
            return None
        line = event_json(other.event)
        line["index"] = entry.index
        line["cursor"] = entry.cursor.encode()
        own.append(line)
    return {"type": "event", "id": first.id, **record_json(record)}, own
