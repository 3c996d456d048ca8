"""A journal as the fold says it should be stored, and as the store holds it; the store's port."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol

from kjournal.check.fold import FoldedPartition
from kjournal.check.fold import RecordInfo
from kjournal.memory import StoredRow
from kjournal.model import Key
from kjournal.model.head import JournalHead

__all__ = ["ExpectedJournal", "StoreSnapshot", "StoredHeads", "StoredJournal", "expected_of"]


@dataclass(frozen=True, slots=True)
class StoredHeads:
    head: JournalHead | None  # as readers and the replicator see it
    buckets: tuple[int, ...] = ()  # every metajournal bucket holding a head of the journal


@dataclass(frozen=True, slots=True)
class StoredJournal:
    heads: StoredHeads
    rows: list[StoredRow]

    @property
    def head(self) -> JournalHead | None:
        return self.heads.head


@dataclass(frozen=True, slots=True)
class ExpectedJournal:
    head: JournalHead | None
    rows: list[StoredRow]
    records: list[RecordInfo] = field(default_factory=list)


def expected_of(folded: FoldedPartition, key: Key) -> ExpectedJournal:
    return ExpectedJournal(
        folded.store.head(key), folded.rows.get(key, []), folded.journals.get(key.id, [])
    )


class StoreSnapshot(Protocol):
    """What the store holds, read as is (kjournal.cassandra.snapshot.CassandraSnapshotReader)."""

    def pointer2(self, topic: str, partition: int) -> int | None: ...

    def stored_heads(self, keys: Sequence[Key]) -> list[StoredHeads]: ...

    def rows_of(self, wanted: Sequence[tuple[Key, Sequence[int]]]) -> list[list[StoredRow]]:
        """Every row of each journal in the given segments."""
        ...
