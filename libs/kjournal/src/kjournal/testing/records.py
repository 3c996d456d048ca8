"""Builders of action records, Kafka records and expected batches for replication tests."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from kjournal.fold.batch import AppendRecord
from kjournal.fold.batch import Appends
from kjournal.fold.batch import DeleteBatch
from kjournal.fold.batch import PurgeBatch
from kjournal.model import ACTION_HEADER
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import AppendHeader
from kjournal.model import Delete
from kjournal.model import DeleteHeader
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import MarkHeader
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import Purge
from kjournal.model import PurgeHeader
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action

TOPIC = "journal"
KEY = Key(TOPIC, "id")
T0 = datetime(2019, 12, 12, 10, 10, 10, tzinfo=UTC)
PARTITION = 0


def at(offset: int, partition: int = PARTITION) -> PartitionOffset:
    return PartitionOffset(partition, offset)


def timestamp_of(offset: int) -> datetime:
    """A distinct action time per offset (the journal row's clustering timestamp)."""
    return T0 + timedelta(seconds=offset)


# Action records with placeholder payloads: enough for folding.


def append(offset: int, first: int, last: int | None = None, key: Key = KEY) -> ActionRecord:
    header = AppendHeader(SeqRange(SeqNr(first), SeqNr(last or first)), PayloadType.JSON)
    return ActionRecord(Append(key, timestamp_of(offset), header, b"{}"), at(offset))


def delete(offset: int, to: int, origin: str | None = None, key: Key = KEY) -> ActionRecord:
    return ActionRecord(
        Delete(key, timestamp_of(offset), DeleteHeader(SeqNr(to), origin)), at(offset)
    )


def purge(offset: int, origin: str | None = None, key: Key = KEY) -> ActionRecord:
    return ActionRecord(Purge(key, timestamp_of(offset), PurgeHeader(origin)), at(offset))


def mark(offset: int, key: Key = KEY) -> ActionRecord:
    return ActionRecord(Mark(key, timestamp_of(offset), MarkHeader("mark")), at(offset))


# Expected batches.


def appends(offset: int, *records: ActionRecord, dropped_from: int | None = None) -> Appends:
    appended = []
    for record in records:
        assert isinstance(record.action, Append)
        appended.append(AppendRecord(record.action, record.partition_offset))
    return Appends(offset, tuple(appended), None if dropped_from is None else SeqNr(dropped_from))


def deletes(offset: int, to: int, origin: str | None = None) -> DeleteBatch:
    return DeleteBatch(offset, SeqNr(to), origin)


def purges(
    offset: int, origin: str | None = None, dropped: tuple[tuple[int, int], ...] = ()
) -> PurgeBatch:
    ranges = tuple(SeqRange(SeqNr(first), SeqNr(last)) for first, last in dropped)
    return PurgeBatch(offset, origin, None, ranges)


# Real Kafka records, as the replicator consumes them.


def events_of(
    seq_nrs: Iterable[int], expire_after: ExpireAfter | None = None, variant: int = 0
) -> Events:
    """Events with payload {"n": seqNr} ({"n": seqNr, "variant": v} for another content)."""

    def payload(n: int) -> JsonPayload:
        return JsonPayload({"n": n, "variant": variant} if variant else {"n": n})

    return Events(
        tuple(Event(SeqNr(n), frozenset({"tag"}), payload(n)) for n in seq_nrs),
        PayloadMetadata(expire_after=expire_after),
    )


def consumed(record: ActionRecord) -> ConsumedRecord:
    """The Kafka record carrying `record`'s action, at its offset."""
    parts = encode_action(record.action)
    return ConsumedRecord(
        topic=parts.topic,
        partition=record.partition_offset.partition,
        offset=record.offset,
        key=parts.key,
        value=parts.value,
        headers=parts.headers,
        timestamp_ms=parts.timestamp_ms,
    )


def append_record(
    offset: int,
    seq_nrs: Iterable[int],
    key: Key = KEY,
    expire_after: ExpireAfter | None = None,
    origin: str | None = "origin",
    variant: int = 0,
    expect: int | None = None,
) -> ConsumedRecord:
    action = append_action(
        key,
        timestamp_of(offset),
        events_of(seq_nrs, expire_after, variant),
        headers={"h": "v"},
        origin=origin,
        version="test",
        expect=expect,
    )
    return consumed(ActionRecord(action, at(offset)))


def delete_record(offset: int, to: int, key: Key = KEY) -> ConsumedRecord:
    return consumed(delete(offset, to, "origin", key))


def purge_record(offset: int, key: Key = KEY) -> ConsumedRecord:
    return consumed(purge(offset, key=key))


def mark_record(offset: int, key: Key = KEY) -> ConsumedRecord:
    return consumed(mark(offset, key))


def broken(
    record: ConsumedRecord, header: bytes | None = None, value: bytes | None = None
) -> ConsumedRecord:
    """`record` with its action header and/or value replaced."""
    headers = [
        (name, header if name == ACTION_HEADER and header is not None else data)
        for name, data in record.headers
    ]
    return ConsumedRecord(
        record.topic,
        record.partition,
        record.offset,
        record.key,
        record.value if value is None else value,
        headers,
        record.timestamp_ms,
    )
