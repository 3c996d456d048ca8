"""What the append rule made of each record: its fate, decided once by the partition's fold.

The fold (read/partition_fold.py) decides every record of a journal it knows as it consumes it,
in offset order, and keeps the fates of the most recent records of each partition. The writer's
outcome, the topic feed and reads then look a fate up instead of working it out again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from kjournal.fold.append_rule import Dropped

__all__ = ["Fate", "FateKind", "Lookup"]


class FateKind(Enum):
    TAKEN = "taken"  # an append the journal took: readers return its events
    REPLAY = "replay"  # dropped: it repeats events the journal holds, content for content
    REFUSED = "refused"  # dropped: its condition did not hold
    CONFLICT = "conflict"  # dropped: other content for seqNrs the journal holds
    GAP = "gap"  # dropped: it skips more than MAX_GAP seqNrs
    # Dropped over seqNrs the journal holds: a replay or not, which takes comparing its events
    # with the journal's (off the fold's path: read/outcome.py); then one of the four above.
    OVERLAP = "overlap"
    DELETE = "delete"  # a delete of a journal that exists (seq_nr: its deleteTo after)
    PURGE = "purge"  # a purge of a journal that exists
    NOTHING = "nothing"  # a delete or purge of a journal that does not exist: no effect
    PARKED = (
        "parked"  # the journal is quarantined from `quarantined_at`: this record is not applied
    )
    UNKNOWN = "unknown"  # replicated before the fold knew its journal: not the fold's to tell


DROPPED_KINDS = {
    Dropped.REPLAY: FateKind.REPLAY,
    Dropped.REFUSED: FateKind.REFUSED,
    Dropped.CONFLICT: FateKind.CONFLICT,
    Dropped.GAP: FateKind.GAP,
}


@dataclass(slots=True)
class Fate:
    """The fate of one journal record at `offset`.

    seq_nr: taken: the journal's seqNr after the append; dropped (and OVERLAP): the seqNr the
        append met (0: no journal); DELETE: the deleteTo after it; otherwise 0.
    expect: an append's condition (None: none).
    copy: a replay's kept copy (offset, timestamp): the one readers return.
    quarantined_at, reason: PARKED: the quarantined record, and (at it) why.
    """

    id: str
    offset: int
    kind: FateKind
    timestamp: datetime
    seq_nr: int = 0
    expect: int | None = None
    copy: tuple[int, datetime] | None = None
    quarantined_at: int | None = None
    reason: str | None = None


class Lookup(Enum):
    """Why `PartitionFold.fate` has no fate to give."""

    AHEAD = "ahead"  # the fold has not consumed the offset yet
    PENDING = "pending"  # consumed; its journal is being bootstrapped, the fate follows
    NO_RECORD = "no-record"  # consumed: no journal record of a known kind there (or not an action)
    GONE = "gone"  # before what the fold decided or still remembers: ask the slow path
