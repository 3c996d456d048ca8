"""The seams between the journal's algorithms and its storage.

`read.py` and `replicate.py` see only these Protocols; the Cassandra and in-memory adapters
implement them. The write side is synchronous (it runs inside Spark tasks); the read side is async.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Protocol

from kjournal.model import EventRecord, ExpireAfter, Key, PartitionOffset, SeqNr
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord


class EventualReader(Protocol):
    """Read side of the eventual store (Cassandra): heads, events, pointers, ids."""

    async def pointer2(self, topic: str, partition: int) -> int | None:
        """The last offset of (topic, partition) fully replicated, or None if none yet."""
        ...

    async def head(self, key: Key) -> JournalHead | None: ...

    def events(self, key: Key, head: JournalHead, from_: SeqNr) -> AsyncIterator[EventRecord]:
        """Events with seqNr ≥ max(from_, delete_to + 1), ascending, streamed by segment."""
        ...

    def ids(self, topic: str) -> AsyncIterator[str]: ...

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        """The oldest quarantined record of this journal, if any."""
        ...


class ReplicatedStore(Protocol):
    """Write side of the eventual store, used only by the replicator (synchronous)."""

    def pointer2(self, topic: str, partition: int) -> int | None: ...

    def set_pointer2(self, topic: str, partition: int, offset: int, now: datetime) -> None: ...

    def head(self, key: Key) -> JournalHead | None: ...

    def append(
        self,
        key: Key,
        head: JournalHead | None,
        position: PartitionOffset,
        now: datetime,
        expire_after: ExpireAfter | None,
        events: Sequence[EventRecord],
    ) -> JournalHead | None:
        """Apply an append batch (skipping what `head` already covers); return the new head."""
        ...

    def delete(
        self,
        key: Key,
        head: JournalHead | None,
        position: PartitionOffset,
        now: datetime,
        to: SeqNr,
        origin: str | None,
    ) -> JournalHead | None: ...

    def purge(
        self, key: Key, head: JournalHead | None, position: PartitionOffset, now: datetime
    ) -> JournalHead | None: ...

    def quarantine(self, record: QuarantinedRecord) -> None: ...
