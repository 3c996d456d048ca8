"""One partition's records folded as the replicator folds them: what Cassandra should hold.

`replicate_partition` over an empty in-memory store, from the first record Kafka still holds,
gives every journal's head and rows as a replicator that applied exactly these records wrote them
(replication times aside: `now` stands for them). Beside it, what each record says about its
journal (kind, offset, time, the last seqNr an append announces), which the comparison needs to
name what it finds and to tell journals it can check from those it cannot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import tzinfo

from kjournal.errors import FormatError
from kjournal.memory import InMemoryReplicatedStore
from kjournal.memory import StoredRow
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import Purge
from kjournal.replicate import replicate_partition
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import decode_action_record
from kjournal.wire.record import timestamp_from_ms

__all__ = ["FoldedPartition", "RecordInfo", "fold_partition"]


@dataclass(frozen=True, slots=True)
class RecordInfo:
    offset: int
    kind: str  # append, delete, purge, mark, poison
    timestamp: datetime | None
    first_seq_nr: int | None = None  # an append's range, from its header
    last_seq_nr: int | None = None


@dataclass
class FoldedPartition:
    topic: str
    partition: int
    beginning: int  # Kafka's first offset still held
    end: int  # offsets below it are folded
    store: InMemoryReplicatedStore
    journals: dict[str, list[RecordInfo]] = field(default_factory=dict)  # by id, offset order
    records: int = 0
    rows: dict[Key, list[StoredRow]] = field(default_factory=dict)  # the store's, by journal

    def checkable(self, id: str) -> bool:
        """Whether the fold holds the journal's whole history: Kafka still has the partition from
        its first offset, or the journal's first record held is a purge (nothing before it
        matters)."""
        if self.beginning == 0:
            return True
        infos = self.journals.get(id)
        return infos is not None and bool(infos) and infos[0].kind == "purge"

    def last_offset(self, id: str) -> int | None:
        infos = self.journals.get(id)
        return infos[-1].offset if infos else None


def fold_partition(
    topic: str,
    partition: int,
    records: Iterable[ConsumedRecord],
    *,
    beginning: int,
    end: int,
    now: datetime | None = None,
    segment_size: int,
    expiry_zone: tzinfo = UTC,
) -> FoldedPartition:
    """Fold the records at offsets beginning ≤ offset < end (in offset order)."""
    kept = [record for record in records if beginning <= record.offset < end]
    folded = FoldedPartition(
        topic,
        partition,
        beginning,
        end,
        InMemoryReplicatedStore(segment_size=segment_size),
        records=len(kept),
    )
    for record in kept:
        if not record.key:
            continue
        id = record.key.decode("utf-8", "replace")
        try:
            decoded = decode_action_record(record)
        except FormatError:
            info = RecordInfo(record.offset, "poison", _time(record))
        else:
            if decoded is None:
                continue
            action = decoded.action
            if isinstance(action, Append):
                seq_nrs = action.header.range
                info = RecordInfo(
                    record.offset, "append", action.timestamp, seq_nrs.from_, seq_nrs.to
                )
            else:
                kind = {Delete: "delete", Purge: "purge", Mark: "mark"}[type(action)]
                info = RecordInfo(record.offset, kind, action.timestamp)
        folded.journals.setdefault(id, []).append(info)
    replicate_partition(
        topic, partition, kept, folded.store, now or datetime.now(UTC), expiry_zone=expiry_zone
    )
    folded.rows = folded.store.rows_by_journal()
    return folded


def _time(record: ConsumedRecord) -> datetime | None:
    if record.timestamp_ms is None or record.timestamp_ms < 0:
        return None
    try:
        return timestamp_from_ms(record.timestamp_ms)
    except OverflowError:
        return None
