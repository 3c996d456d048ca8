"""What the check can find, and the results it returns per journal and per partition."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from dataclasses import field

from kjournal.model import Key

__all__ = ["Finding", "JournalResult", "Kind", "PartitionResult", "Unchecked", "seq_ranges"]


class Kind(enum.Enum):
    """A kind of difference between Cassandra and the fold of Kafka (the report's words)."""

    HEAD_MISSING = "head-missing"
    """Kafka's records make the journal exist; Cassandra has no head for it."""
    HEAD_UNEXPECTED = "head-unexpected"
    """Cassandra has a head the fold does not: a purge not applied, or a journal Kafka never
    held in this partition."""
    HEAD_SEQ_NR = "head-seq-nr"
    HEAD_DELETE_TO = "head-delete-to"
    HEAD_OFFSET = "head-offset"
    """The head's Kafka position: the replicator's watermark for the journal."""
    HEAD_EXPIRY = "head-expiry"
    HEAD_TWICE = "head-in-both-layouts"
    """A head in a bucket of each metajournal layout (readers see the current one only)."""
    EVENTS_MISSING = "events-missing"
    EVENTS_CHANGED = "events-changed"
    """Rows whose content differs from their Kafka record's events."""
    EVENTS_EXTRA = "events-extra"
    """Rows the fold does not have (not from any append of the journal that Kafka holds)."""
    EVENTS_DROPPED = "events-of-dropped-append"
    """Rows of an append the append rule dropped (a replay, a refused condition, a conflict or
    a gap), which a replicator that does not know the rule stores."""
    EVENTS_ORDER = "events-order"
    """Rows whose Kafka offsets do not increase with their seqNrs."""
    POINTER2_MISSING = "pointer2-missing"
    POINTER2_BEHIND = "pointer2-behind"
    """pointer2 below the position of heads it should cover: the partition is replayed."""
    POINTER2_AHEAD = "pointer2-ahead"
    """pointer2 past Kafka's last record: the next records would be skipped."""


@dataclass(frozen=True, slots=True)
class Finding:
    kind: Kind
    detail: str


class Unchecked(enum.Enum):
    """Why a journal could not be compared (listed, never counted as a difference)."""

    BEFORE_RETENTION = "history-before-log-start"
    """Kafka no longer holds the journal's first records (retention): the fold would start
    from the middle of its history."""
    NOT_REPLICATED = "not-replicated"
    """Records of it are in Kafka that pointer2 has not passed, and did not within the wait."""
    CHANGING = "changing"
    """Appended to (or deleted, purged) in Kafka during every attempt to compare it."""


@dataclass
class JournalResult:
    key: Key
    partition: int
    findings: list[Finding] = field(default_factory=list)
    unchecked: Unchecked | None = None
    events: int = 0  # expected events compared

    @property
    def differs(self) -> bool:
        return bool(self.findings)


@dataclass
class PartitionResult:
    """One partition's pass: the journals that differ or could not be checked, and counts."""

    topic: str
    partition: int
    beginning: int
    end: int  # the records folded are those at offsets beginning ≤ offset < end
    pointer2: int | None
    max_head_offset: int | None  # the highest head position stored for its journals
    journals: int = 0  # journals compared
    events: int = 0  # expected events compared
    results: list[JournalResult] = field(default_factory=list)  # the differing and unchecked
    findings: list[Finding] = field(default_factory=list)  # the partition's own (pointer2)
    last_offsets: dict[str, int] = field(default_factory=dict)  # per differing journal id


def seq_ranges(seq_nrs: list[int], limit: int = 6) -> str:
    """`1..3, 7, 9..12` (at most `limit` ranges, then how many more)."""
    ranges: list[tuple[int, int]] = []
    for n in sorted(seq_nrs):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], n)
        elif not ranges or n != ranges[-1][1]:
            ranges.append((n, n))
    text = ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in ranges[:limit])
    if len(ranges) > limit:
        text += f" and {len(ranges) - limit} more ranges"
    return text
