"""What the journal's operations answer: where an append landed, and a journal's status.

Shared by the in-process `Journals` and the HTTP client, so both return the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from kjournal.model.conflict import Conflict
from kjournal.model.head import Expiry
from kjournal.model.key import Key
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.seq_nr import SeqNr
from kjournal.model.seq_nr import SeqRange


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where a taken append is: its record's position, or for a replay (`replay`: the journal
    already held these events, an identical earlier append) the position of the copy readers
    return. `seq_nr`: the journal's seqNr as of this append (its ETag), `range.to` when None."""

    partition_offset: PartitionOffset
    range: SeqRange
    timestamp: datetime
    replay: bool = False
    seq_nr: SeqNr | None = None

    @property
    def journal_seq_nr(self) -> SeqNr:
        return self.range.to if self.seq_nr is None else self.seq_nr


class Outcome(Enum):
    """What the append rule (kjournal/fold/append_rule.py) made of an append in Kafka."""

    TAKEN = "taken"
    REPLAY = "replay"
    REFUSED = "refused"
    CONFLICT = "conflict"
    GAP = "gap"


@dataclass(frozen=True, slots=True)
class AppendOutcome:
    """The fate of the append at an offset, as every reader sees it.

    seq_nr: the journal's seqNr after the append when taken, else the one it met (0: none).
    position, timestamp: for a taken append its own; for a replay the copy readers return.
    expected: the append's condition, if it had one.
    """

    outcome: Outcome
    seq_nr: int
    position: PartitionOffset
    timestamp: datetime
    expected: int | None = None


@dataclass(frozen=True, slots=True)
class JournalStatus:
    """A journal's head as a read sees it now, and how much of it is still only in Kafka."""

    key: Key
    seq_nr: SeqNr | None
    delete_to: SeqNr | None
    expiry: Expiry | None
    partition: int
    end_offset: int
    pointer2: int | None
    unreplicated_actions: int  # this journal's actions not yet in Cassandra
    unreplicated_offsets: int  # the partition's records not yet replicated (all journals)
    # of its unreplicated appends, those that repeat seqNrs the journal already has
    unreplicated_duplicates: int = 0
    # replicated duplicates that differed from the event kept (the first ones, oldest first);
    # None where the store does not keep them (a keyspace kafka-journal created)
    conflicts: tuple[Conflict, ...] | None = ()
    quarantine_known: bool = True  # False on a keyspace without kjournal's quarantine table
