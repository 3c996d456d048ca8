"""A topic feed's line as the client sees it (the server's side is kjournal.feed.entries): the
entry's type, the cursor to resume right after it, and what it says."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kjournal.api.convert import event_record_from_json
from kjournal.errors import FormatError
from kjournal.model import EventRecord

__all__ = ["FEED_ITEM_TYPES", "FeedItem", "feed_item_from_json"]

FEED_ITEM_TYPES = frozenset({"event", "delete", "purge", "quarantined", "end", "heartbeat"})


@dataclass(frozen=True, slots=True)
class FeedItem:
    """`type`: event, delete, purge, quarantined, heartbeat or end (docs/feed.md). `record`
    and `index` (its place in its append) for an event; `to` for a delete; `reason` for a
    quarantined record."""

    type: str
    cursor: str
    id: str | None = None
    partition: int | None = None
    offset: int | None = None
    record: EventRecord | None = None
    index: int | None = None
    to: int | None = None
    reason: str | None = None


def feed_item_from_json(value: Mapping[str, Any]) -> FeedItem:
    """A feed line back into a FeedItem; FormatError if it is not one."""
    kind, cursor = value.get("type"), value.get("cursor")
    if kind not in FEED_ITEM_TYPES or not isinstance(cursor, str):
        raise FormatError(f"not a feed line: {dict(value)!r:.100}")
    record = event_record_from_json(value) if kind == "event" else None
    try:
        return FeedItem(
            type=str(kind),
            cursor=cursor,
            id=value.get("id"),
            partition=None if value.get("partition") is None else int(value["partition"]),
            offset=None if value.get("offset") is None else int(value["offset"]),
            record=record,
            index=None if value.get("index") is None else int(value["index"]),
            to=None if value.get("to") is None else int(value["to"]),
            reason=value.get("reason"),
        )
    except (TypeError, ValueError) as exc:
        raise FormatError(f"not a feed line: {exc!r}") from exc
