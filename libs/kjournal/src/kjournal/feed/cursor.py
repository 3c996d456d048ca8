"""A topic feed's cursor: where each partition resumes, down to an event inside one append.

A position is (offset, skip): the next record to read is at `offset`, and its first `skip`
entries were already delivered (an append of n events has n entries, any other record one), so a
client can stop between two events of one append and resume with neither a gap nor a repeat.
The canonical position after a record's last entry is (offset + 1, 0).

The text is opaque to clients (they pass it back verbatim): `v1.` then the base64url (unpadded)
of `partition:offset[:skip]` items joined by `,`, in partition order.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from kjournal.errors import InvalidCursor

__all__ = ["MAX_CURSOR_CHARS", "Cursor", "CursorFrame", "Position"]

_VERSION = "v1."
MAX_CURSOR_CHARS = (
    64_000  # about 4,000 partitions; Kafka topics rarely have more than a few hundred
)
_ITEM = re.compile(r"(0|[1-9][0-9]{0,9}):(0|[1-9][0-9]{0,18})(?::([1-9][0-9]{0,9}))?")
_OFFSET_MAX = (1 << 63) - 1


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """The next record of a partition to read, and how many of its entries were delivered."""

    offset: int
    skip: int = 0

    def after_entry(self, entries: int) -> Position:
        """The position after one more entry of the record at `offset`, which has `entries`."""
        if self.skip + 1 >= entries:
            return Position(self.offset + 1)
        return Position(self.offset, self.skip + 1)


@dataclass(frozen=True, slots=True)
class Cursor:
    """Positions by partition (partitions it does not name are not covered by it). `text`: its
    encoding, when whoever made it had it already (CursorFrame); not part of its value."""

    positions: Mapping[int, Position]
    text: str | None = field(default=None, compare=False, repr=False)

    def with_position(self, partition: int, position: Position) -> Cursor:
        return Cursor({**self.positions, partition: position})

    def encode(self) -> str:
        if self.text is not None:
            return self.text
        return _encoded(
            ",".join([_item(p, position) for p, position in sorted(self.positions.items())])
        )

    @classmethod
    def decode(cls, text: str) -> Cursor:
        """The cursor `encode` wrote; InvalidCursor for anything else."""
        if len(text) > MAX_CURSOR_CHARS:
            raise InvalidCursor(f"a cursor has at most {MAX_CURSOR_CHARS} characters")
        if not text.startswith(_VERSION):
            raise InvalidCursor("not a cursor of this feed (pass back a cursor it gave verbatim)")
        body = text[len(_VERSION) :]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("ascii")
        except (binascii.Error, ValueError):
            raise InvalidCursor("the cursor is damaged (not base64url)") from None
        positions: dict[int, Position] = {}
        for item in raw.split(",") if raw else ():
            match = _ITEM.fullmatch(item)
            if match is None:
                raise InvalidCursor("the cursor is damaged (a position does not parse)")
            partition, offset = int(match[1]), int(match[2])
            if partition in positions or offset > _OFFSET_MAX:
                raise InvalidCursor("the cursor is damaged (a partition twice, or a bad offset)")
            positions[partition] = Position(offset, int(match[3] or 0))
        if not positions:
            raise InvalidCursor("the cursor names no partition")
        return cls(positions)


class CursorFrame:
    """The cursors of one record's entries: `positions` with only `partition`'s position
    changing. The other partitions' text is joined once, so each entry's cursor costs one item
    and the base64 (a feed gives every event its cursor, and this was a tenth of a catch-up)."""

    def __init__(self, positions: Mapping[int, Position], partition: int) -> None:
        self._positions = dict(positions)
        self._partition = partition
        items = sorted(positions.items())
        self._before = "".join(_item(p, at) + "," for p, at in items if p < partition)
        self._after = "".join("," + _item(p, at) for p, at in items if p > partition)

    def cursor(self, position: Position) -> Cursor:
        text = self._before + _item(self._partition, position) + self._after
        return Cursor({**self._positions, self._partition: position}, _encoded(text))

    def after_event(self, offset: int, index: int, events: int) -> Cursor:
        """The cursor right after entry `index` of the record at `offset`, which has `events`
        entries: `cursor(Position(offset, index).after_entry(events))`, in one step (every
        event of a feed gets one)."""
        position = Position(offset + 1) if index + 1 >= events else Position(offset, index + 1)
        text = self.text_after_event(offset, index, events)
        return Cursor({**self._positions, self._partition: position}, text)

    def text_after_event(self, offset: int, index: int, events: int) -> str:
        """`after_event(...).encode()`, without the Cursor: what a catch-up's line carries."""
        partition = self._partition
        if index + 1 >= events:
            item = f"{partition}:{offset + 1}"
        else:
            item = f"{partition}:{offset}:{index + 1}"
        return _encoded(self._before + item + self._after)


def _item(partition: int, position: Position) -> str:
    if position.skip:
        return f"{partition}:{position.offset}:{position.skip}"
    return f"{partition}:{position.offset}"


def _encoded(text: str) -> str:
    return _VERSION + base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii").rstrip("=")
