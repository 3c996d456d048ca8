"""A conflicting duplicate: an appended event that repeats a seqNr the journal already has, with
other content. It is kept out of the journal (the first event stays) and recorded here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kjournal.model.partition_offset import PartitionOffset
from kjournal.model.seq_nr import SeqNr


@dataclass(frozen=True, slots=True)
class Conflict:
    topic: str
    id: str
    seq_nr: SeqNr
    dropped: PartitionOffset  # the record whose event was dropped
    kept: PartitionOffset  # the record of the event the journal keeps
    detected_at: datetime
