"""One journal as the partition's fold knows it: what Cassandra holds of it (its base), its records
since (its tail), and its state after every record folded.

The base is the journal's head as of the last record the fold trimmed (pointer2 passed it): what
the replicator has written. The tail is the journal's records after that, in offset order, with
their payloads while the fold's byte budget lasts. Base folded with tail by the append rule is the
state (seq_nr, delete_to), which the fold also keeps up to date record by record.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from dataclasses import field

from kjournal.fold.append_rule import takes
from kjournal.fold.head_info import appended
from kjournal.fold.head_info import deleted
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import PartitionOffset
from kjournal.model import Purge
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead

__all__ = ["Base", "HeadMeta", "JournalEntry", "head_of"]


@dataclass(frozen=True, slots=True)
class HeadMeta:
    """What a read of Cassandra's rows needs of the journal's head besides its state: fixed when
    the journal's incarnation was created (a purge ends it)."""

    segment_size: int
    record_id: uuid.UUID | None


@dataclass(frozen=True, slots=True)
class Base:
    """The journal as Cassandra holds it once every record up to `offset` is replicated.

    seq_nr None: no journal there (never created, or purged). offset: its last record with an
    effect on the head (-1: none known)."""

    seq_nr: SeqNr | None = None
    delete_to: SeqNr | None = None
    offset: int = -1

    @classmethod
    def of_head(cls, head: JournalHead) -> Base:
        return cls(head.seq_nr, head.delete_to, head.partition_offset.offset)

    def apply(self, record: ActionRecord) -> Base:
        """The base after `record`, judged by the append rule as the replicator judges it."""
        action = record.action
        if isinstance(action, Append):
            header = action.header
            if not takes(self.seq_nr, header.range.from_, header.expect):
                return self
            seq_nr, delete_to = appended(
                self.seq_nr, self.delete_to, header.range.from_, header.range.to
            )
            return Base(seq_nr, delete_to, record.offset)
        if self.seq_nr is None:
            return self  # a delete or purge of no journal: the replicator ignores it
        if isinstance(action, Delete):
            seq_nr, delete_to = deleted(self.seq_nr, self.delete_to, action.header.to)
            return Base(seq_nr, delete_to, record.offset)
        if isinstance(action, Purge):
            return Base(None, None, record.offset)
        return self  # a mark


@dataclass(slots=True)
class JournalEntry:
    """One journal in the fold. Fates of its records at offsets ≥ `exact_from` are the fold's."""

    id: str
    base: Base
    exact_from: int
    seq_nr: SeqNr | None = None
    delete_to: SeqNr | None = None
    last_offset: int = -1
    tail: list[ActionRecord] = field(default_factory=list)
    payloads_from: int | None = None  # appends of the tail from here on kept without payload
    payload_bytes: int = 0  # payload bytes of the tail held against the fold's budget
    quarantined_at: int | None = None
    quarantine_reason: str | None = None
    error: Exception | None = None  # reads and outcomes of this journal fail with it
    meta: HeadMeta | None = None  # of the incarnation the base belongs to, once read

    @classmethod
    def of_base(cls, id: str, base: Base, exact_from: int) -> JournalEntry:
        return cls(id, base, exact_from, base.seq_nr, base.delete_to, base.offset)

    @property
    def exists(self) -> bool:
        return self.seq_nr is not None

    @property
    def unreplicated(self) -> bool:
        """Whether the fold holds records of it that Cassandra may not (its tail)."""
        return bool(self.tail)

    def head(self, partition: int) -> JournalHead | None:
        """The base as a `metajournal` row for reading Cassandra's events (`meta` must be
        known); None when the base has no journal."""
        return head_of(self.base, self.meta, partition)


def head_of(base: Base, meta: HeadMeta | None, partition: int) -> JournalHead | None:
    """`base` as the `metajournal` row a read of Cassandra's events needs (with `meta`, which
    must be known when the base has a journal); None when it has none."""
    if base.seq_nr is None:
        return None
    assert meta is not None, "the head's metadata is read before Cassandra's rows"
    return JournalHead(
        PartitionOffset(partition, max(base.offset, 0)),
        meta.segment_size,
        base.seq_nr,
        base.delete_to,
        record_id=meta.record_id,
    )
