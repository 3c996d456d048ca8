"""What the journal's operations answer: where an append landed, and a journal's status.

Shared by the in-process `Journals` and the HTTP client, so both return the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kjournal.model.conflict import Conflict
from kjournal.model.head import Expiry
from kjournal.model.key import Key
from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.seq_nr import SeqNr, SeqRange


@dataclass(frozen=True, slots=True)
class AppendResult:
    partition_offset: PartitionOffset
    range: SeqRange
    timestamp: datetime


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
