"""In-memory eventual store: both ports (`ReplicatedStore`, `EventualReader`) over plain dicts.

The store executes the writes of the same pure plans (`kjournal.fold.plan`) as the Cassandra
store, one by one, so tests of the replication algorithm — including crashes between any two
writes (`on_write`) — run in microseconds; kjournal/testing/eventual_store.py holds both stores to
the same scenarios. `InMemoryEventualReader` reads what a store holds, as a reader would.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import AsyncGenerator
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import datetime

from kjournal.fold.plan import DeleteHead
from kjournal.fold.plan import DeleteRow
from kjournal.fold.plan import DeleteRows
from kjournal.fold.plan import InsertHead
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import Step
from kjournal.fold.plan import UpdateHead
from kjournal.fold.plan import Write
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.conflict import Conflict
from kjournal.model.head import DEFAULT_SEGMENT_SIZE
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord

__all__ = [
    "HeadRow",
    "InMemoryEventualReader",
    "InMemoryReplicatedStore",
    "PointerRow",
    "StoredRow",
]


@dataclass(frozen=True, slots=True)
class HeadRow:
    """A `metajournal` row; `written` counts the store's head writes (Cassandra's WRITETIME)."""

    head: JournalHead
    created: datetime
    updated: datetime
    origin: str | None
    written: int = 0


@dataclass(frozen=True, slots=True)
class StoredRow:
    """A `journal` row."""

    event: EventRecord
    meta_record_id: uuid.UUID | None
    segment: int = 0


@dataclass(frozen=True, slots=True)
class PointerRow:
    offset: int
    created: datetime | None
    updated: datetime


class InMemoryReplicatedStore:
    """`ReplicatedStore` over dicts; thread-safe.

    on_write: called with each write just before it is applied; raising from it simulates a crash
        at that point (the write and everything after it are lost).
    """

    def __init__(
        self,
        *,
        segment_size: int = DEFAULT_SEGMENT_SIZE,
        on_write: Callable[[Write], None] | None = None,
    ) -> None:
        self.segment_size = segment_size
        self.on_write = on_write
        self._lock = threading.Lock()
        self._journal: dict[tuple[Key, int], dict[tuple[int, datetime], StoredRow]] = {}
        self._metajournal: dict[Key, HeadRow] = {}
        self._pointer2: dict[tuple[str, int], PointerRow] = {}
        self._quarantine: dict[tuple[str, str], dict[tuple[int, int], QuarantinedRecord]] = {}
        self._conflicts: dict[Key, dict[tuple[int, int, int], Conflict]] = {}
        self._head_writes = itertools.count(1)

    def sharing(self, segment_size: int) -> InMemoryReplicatedStore:
        """Another store over the same tables, giving new journals `segment_size` (as two
        replicators configured differently would share one keyspace)."""
        other = InMemoryReplicatedStore(segment_size=segment_size, on_write=self.on_write)
        other._lock = self._lock
        other._journal = self._journal
        other._metajournal = self._metajournal
        other._pointer2 = self._pointer2
        other._quarantine = self._quarantine
        other._conflicts = self._conflicts
        other._head_writes = self._head_writes
        return other

    # ReplicatedStore

    def pointer2(self, topic: str, partition: int) -> int | None:
        with self._lock:
            row = self._pointer2.get((topic, partition))
        return None if row is None else row.offset

    def set_pointer2(
        self, topic: str, partition: int, offset: int, now: datetime, *, insert: bool
    ) -> None:
        with self._lock:
            current = self._pointer2.get((topic, partition))
            created = now if insert or current is None else current.created
            self._pointer2[(topic, partition)] = PointerRow(offset, created, now)

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]:
        return [self.head(key) for key in keys]

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        for key, steps in journals:
            for step in steps:
                for write in step:
                    if self.on_write is not None:
                        self.on_write(write)
                    with self._lock:
                        self._apply(key, write)
        return [None] * len(journals)

    def stored_events(
        self, key: Key, head: JournalHead, seq_nrs: Collection[int]
    ) -> dict[int, EventRecord]:
        wanted = set(seq_nrs)
        found: dict[int, EventRecord] = {}
        for row in self.rows(key):
            seq = row.event.seq_nr
            if seq in wanted and (
                seq not in found
                or row.event.partition_offset.offset < found[seq].partition_offset.offset
            ):
                found[seq] = row.event
        return found

    def record_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        with self._lock:
            for conflict in conflicts:
                kept = self._conflicts.setdefault(Key(conflict.topic, conflict.id), {})
                position = conflict.dropped
                kept[(position.partition, position.offset, conflict.seq_nr)] = conflict

    def quarantine(self, records: Sequence[QuarantinedRecord]) -> None:
        with self._lock:
            for record in records:
                kept = self._quarantine.setdefault((record.topic, record.id or ""), {})
                kept[(record.partition, record.offset)] = record

    def quarantined_from(self, topic: str, partition: int, ids: Collection[str]) -> dict[str, int]:
        result: dict[str, int] = {}
        with self._lock:
            for id in ids:
                records = self._quarantine.get((topic, id))
                if records:
                    here = [offset for p, offset in records if p == partition]
                    result[id] = min(here) if here else -1
        return result

    # Inspection, for tests and tools

    def head(self, key: Key) -> JournalHead | None:
        with self._lock:
            row = self._metajournal.get(key)
        return None if row is None else row.head

    def head_row(self, key: Key) -> HeadRow | None:
        with self._lock:
            return self._metajournal.get(key)

    def pointer_row(self, topic: str, partition: int) -> PointerRow | None:
        with self._lock:
            return self._pointer2.get((topic, partition))

    def rows(self, key: Key) -> list[StoredRow]:
        """Every `journal` row of the journal, by seqNr then timestamp, deleted or not."""
        with self._lock:
            rows = [
                (seq_and_time, row)
                for (row_key, _), segment in self._journal.items()
                if row_key == key
                for seq_and_time, row in segment.items()
            ]
        return [row for _, row in sorted(rows, key=lambda item: item[0])]

    def rows_by_journal(self) -> dict[Key, list[StoredRow]]:
        """`rows` of every journal at once (one pass over the store, rather than one per
        journal)."""
        with self._lock:
            found: dict[Key, list[tuple[tuple[int, datetime], StoredRow]]] = {}
            for (row_key, _), segment in self._journal.items():
                found.setdefault(row_key, []).extend(segment.items())
        return {
            key: [row for _, row in sorted(rows, key=lambda item: item[0])]
            for key, rows in found.items()
        }

    def segments(self, key: Key) -> list[int]:
        with self._lock:
            return sorted(segment for row_key, segment in self._journal if row_key == key)

    def events(self, key: Key) -> list[EventRecord]:
        """What a reader sees: rows after the head's delete_to, nothing without a head."""
        head = self.head(key)
        if head is None:
            return []
        hidden = head.delete_to or 0
        return [row.event for row in self.rows(key) if row.event.seq_nr > hidden]

    def quarantined_ids(self, topic: str) -> frozenset[str]:
        with self._lock:
            return frozenset(
                id for (t, id), records in self._quarantine.items() if t == topic and records
            )

    def quarantined(self, topic: str, id: str) -> list[QuarantinedRecord]:
        with self._lock:
            records = self._quarantine.get((topic, id), {})
            return [records[position] for position in sorted(records)]

    def conflicts(self, key: Key) -> list[Conflict]:
        with self._lock:
            recorded = self._conflicts.get(key, {})
            return [recorded[position] for position in sorted(recorded)]

    def keys(self) -> set[Key]:
        with self._lock:
            return set(self._metajournal) | {key for key, _ in self._journal}

    def seed_head(self, key: Key, head: JournalHead, created: datetime, origin: str | None) -> None:
        """Store `head` as is, as if replicated earlier."""
        with self._lock:
            self._metajournal[key] = HeadRow(
                head, created, created, origin, next(self._head_writes)
            )

    def clear_quarantine(self, topic: str, id: str) -> None:
        with self._lock:
            self._quarantine.pop((topic, id), None)

    # Execution

    def _apply(self, key: Key, write: Write) -> None:
        if isinstance(write, InsertRows):
            segment = self._journal.setdefault((key, write.segment), {})
            for event in write.events:
                segment[(event.seq_nr, event.timestamp)] = StoredRow(
                    event, write.meta_record_id, write.segment
                )
        elif isinstance(write, DeleteRows):
            if write.to is None:
                self._journal.pop((key, write.segment), None)
            else:
                segment = self._journal.get((key, write.segment), {})
                for position in [p for p in segment if p[0] <= write.to]:
                    del segment[position]
                if not segment:
                    self._journal.pop((key, write.segment), None)
        elif isinstance(write, DeleteRow):
            segment = self._journal.get((key, write.segment), {})
            segment.pop((write.seq_nr, write.timestamp), None)
            if not segment:
                self._journal.pop((key, write.segment), None)
        elif isinstance(write, InsertHead):
            self._metajournal[key] = HeadRow(
                write.head, write.created, write.created, write.origin, next(self._head_writes)
            )
        elif isinstance(write, UpdateHead):
            self._update_head(key, write)
        else:
            assert isinstance(write, DeleteHead)
            self._metajournal.pop(key, None)

    def _update_head(self, key: Key, write: UpdateHead) -> None:
        row = self._metajournal.get(key)
        if row is None:
            # Cassandra's UPDATE would create a partial row; a plan only updates a loaded head.
            raise AssertionError(f"update of a missing head for {key}")
        head = replace(row.head, partition_offset=write.partition_offset)
        if write.seq_nr is not None:
            head = replace(head, seq_nr=write.seq_nr)
        if write.delete_to is not None:
            head = replace(head, delete_to=write.delete_to)
        if write.expiry is not None:
            head = replace(head, expiry=write.expiry)
        if write.remove_expiry:
            head = replace(head, expiry=None)
        if write.remove_delete_to:
            head = replace(head, delete_to=None)
        self._metajournal[key] = replace(
            row, head=head, updated=write.updated, written=next(self._head_writes)
        )


class InMemoryEventualReader:
    """`ports.EventualReader` over an `InMemoryReplicatedStore`."""

    def __init__(self, store: InMemoryReplicatedStore) -> None:
        self.store = store

    async def pointer2(self, topic: str, partition: int) -> int | None:
        return self.store.pointer2(topic, partition)

    async def head(self, key: Key) -> JournalHead | None:
        return self.store.head(key)

    async def events(
        self, key: Key, head: JournalHead, from_: SeqNr
    ) -> AsyncGenerator[EventRecord, None]:
        start = max(from_, (head.delete_to or 0) + 1)
        last_segment = (head.seq_nr - 1) // head.segment_size
        previous: EventRecord | None = None
        for row in self.store.rows(key):  # by seqNr, then timestamp
            event = row.event
            if event.seq_nr < start or row.segment > last_segment:
                continue
            if previous is not None and previous.seq_nr == event.seq_nr:
                if event.partition_offset.offset < previous.partition_offset.offset:
                    previous = event
                continue
            if previous is not None:
                yield previous
            previous = event
        if previous is not None:
            yield previous

    async def ids(self, topic: str) -> AsyncGenerator[str, None]:
        for key in sorted(self.store.keys(), key=str):
            if key.topic == topic and self.store.head(key) is not None:
                yield key.id

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        records = self.store.quarantined(key.topic, key.id)
        return records[0] if records else None

    async def quarantined_ids(self, topic: str) -> frozenset[str]:
        return self.store.quarantined_ids(topic)

    @property
    def quarantine_known(self) -> bool:
        return True

    async def conflicts(self, key: Key, limit: int) -> list[Conflict] | None:
        return self.store.conflicts(key)[:limit]
