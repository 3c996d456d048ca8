"""The seams between the journal's algorithms and its storage.

`read/` and `replicate/` see only these Protocols; the Cassandra and in-memory adapters
implement them. The write side is synchronous (it runs inside Spark tasks); the read side is async.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Protocol

from kjournal.model import AppendOutcome
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.conflict import Conflict
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.wire.record import ConsumedRecord

if TYPE_CHECKING:
    from kjournal.fold.plan import Step


class EventualReader(Protocol):
    """Read side of the eventual store (Cassandra): heads, events, pointers, ids."""

    async def pointer2(self, topic: str, partition: int) -> int | None:
        """The last offset of (topic, partition) fully replicated, or None if none yet."""
        ...

    async def head(self, key: Key) -> JournalHead | None:
        """The journal's `metajournal` row, or None if the store holds no such journal."""
        ...

    def events(
        self, key: Key, head: JournalHead, from_: SeqNr
    ) -> AsyncGenerator[EventRecord, None]:
        """Events with seqNr ≥ max(from_, delete_to + 1), ascending, by segment, in the segments
        up to head.seq_nr's; each seqNr once (a seqNr stored twice, as kafka-journal's replicator
        stores a resent append, is returned as the copy with the lowest offset).

        Implementations return an async generator: close it (contextlib.aclosing) when stopping
        early.
        """
        ...

    def ids(self, topic: str) -> AsyncGenerator[str, None]:
        """Every journal id with a head in `topic`, each once, in no particular order."""
        ...

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        """The oldest quarantined record of this journal, if any."""
        ...

    async def quarantined_ids(self, topic: str) -> frozenset[str]:
        """The journals of `topic` with quarantined records (a scan of a table that is normally
        tiny; empty where the store keeps no quarantine)."""
        ...

    @property
    def quarantine_known(self) -> bool:
        """Whether quarantined records can be known (a kafka-journal keyspace lacks the table)."""
        ...

    async def conflicts(self, key: Key, limit: int) -> list[Conflict] | None:
        """The journal's conflicting duplicates, oldest first, at most `limit`; None where the
        store does not keep them (a kafka-journal keyspace)."""
        ...


class ReplicatedStore(Protocol):
    """Write side of the eventual store, used only by the replicator (synchronous).

    The replicator plans (`kjournal.fold.plan`, pure) and the store executes: `write` runs each
    journal's steps in order, every write of a step acknowledged before the next step starts, so
    rows are stored before the head that covers them and a crash at any point is repaired by
    applying the same records again. Journals are independent and may run concurrently.
    """

    @property
    def segment_size(self) -> int:
        """The `journal` segment size given to journals created from now on."""
        ...

    def pointer2(self, topic: str, partition: int) -> int | None:
        """The last offset of (topic, partition) fully replicated, or None if none yet."""
        ...

    def set_pointer2(
        self, topic: str, partition: int, offset: int, now: datetime, *, insert: bool
    ) -> None:
        """Record `offset` as fully replicated; `insert` (no pointer yet) also sets `created`."""
        ...

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]:
        """The head of each journal (None: no head), in the order of `keys`."""
        ...

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        """Run each journal's steps; per journal, None or the error that stopped its steps."""
        ...

    def stored_events(
        self, key: Key, head: JournalHead, seq_nrs: Collection[int]
    ) -> dict[int, EventRecord]:
        """The stored events of the journal with these seqNrs (those still stored, each once:
        the copy with the lowest offset)."""
        ...

    def record_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        """Keep a record of conflicting duplicates (idempotent: one row per dropped event)."""
        ...

    def quarantine(self, records: Sequence[QuarantinedRecord]) -> None:
        """Keep records the replicator will not apply; their journals count as quarantined."""
        ...

    def quarantined_from(self, topic: str, partition: int, ids: Collection[str]) -> dict[str, int]:
        """For each of `ids` with quarantined records: the first quarantined offset in `partition`.

        -1 if its quarantined records are all in other partitions (nothing of it is applied).
        """
        ...


class AppendOutcomes(Protocol):
    """Where a writer learns what the append rule made of its append (docs/concurrency.md): the
    reader, in process (`kjournal.read.outcome.LocalOutcomes`) or over HTTP (the writer service)."""

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        """The outcome of the journal's append at `offset` of its partition."""
        ...


class PartitionRecords(Protocol):
    """A partition's records by offset range, as the log holds them (kafka/tail_scanner.py): what
    the follower, the topic feed and expiry scan."""

    def records(
        self,
        topic: str,
        partition: int,
        start: int,
        end: int,
        accept: Callable[[bytes | None], bool],
    ) -> AsyncIterator[ConsumedRecord]:
        """The records at offsets [start, end) whose key `accept`s, in offset order, undecoded."""
        ...
