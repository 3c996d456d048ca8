"""Notification ids on an application topic: an event's place in the topic's one partition as
one integer that increases with the log, `offset × 1 000 000 + index + 1` (`index`: the event's
place in its append). They are not contiguous: an append of n events takes n ids of its record's
million, and records the application sequence does not show (deletes, marks, refused appends)
take none. Offsets up to about 9.2 × 10¹² fit a signed 64-bit integer.
"""

from __future__ import annotations

from eventsourcing.persistence import DataError
from kjournal.feed.cursor import Cursor
from kjournal.feed.cursor import Position

__all__ = [
    "APPLICATION_PARTITION",
    "IDS_PER_RECORD",
    "cursor_from",
    "notification_id",
    "position_of",
]

IDS_PER_RECORD = 1_000_000
APPLICATION_PARTITION = 0


def notification_id(offset: int, index: int) -> int:
    """The id of the `index`th event of the append at `offset`."""
    if not 0 <= index < IDS_PER_RECORD:
        raise DataError(
            f"the append at offset {offset} has more than {IDS_PER_RECORD:,} events: its event "
            f"{index} has no notification id"
        )
    return offset * IDS_PER_RECORD + index + 1


def position_of(first_id: int) -> Position:
    """Where the feed delivers the notification `first_id`, or the first one after it."""
    offset, skip = divmod(max(first_id, 1) - 1, IDS_PER_RECORD)
    return Position(offset, skip)


def cursor_from(first_id: int | None) -> str | None:
    """The feed cursor (`after`) to read from notification `first_id` on; None: from the start."""
    if first_id is None or first_id <= 1:
        return None
    return Cursor({APPLICATION_PARTITION: position_of(first_id)}).encode()
