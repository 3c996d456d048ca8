"""Rows written with hand-written CQL, independent of kjournal.cassandra.statements."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta

from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent_with_args
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.settings import TableNames
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload

BASE_TIME = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class RawEvent:
    seq_nr: int
    partition: int = 0
    offset: int = 0
    timestamp: datetime = BASE_TIME
    payload: Payload | None = None
    tags: frozenset[str] = frozenset()
    headers: dict[str, str] = field(default_factory=dict)
    metadata_json: str | None = None
    origin: str | None = None
    version: str | None = None
    meta_record_id: uuid.UUID | None = None

    def expected(self) -> EventRecord:
        metadata = RecordMetadata()
        if self.metadata_json is not None:
            doc = json.loads(self.metadata_json)
            metadata = RecordMetadata(
                HeaderMetadata(doc["header"].get("data")),
                PayloadMetadata(None, doc["payload"].get("data")),
            )
        return EventRecord(
            event=Event(SeqNr(self.seq_nr), self.tags, self.payload),
            timestamp=self.timestamp,
            partition_offset=PartitionOffset(self.partition, self.offset),
            origin=self.origin,
            version=self.version,
            metadata=metadata,
            headers=self.headers,
        )


def sample_events(count: int, *, start: int = 1, offset_base: int = 100) -> list[RawEvent]:
    """Events of every payload kind; every third pair shares one Kafka record (an append)."""
    kinds: list[Payload | None] = [
        JsonPayload({"n": 0, "s": "é", "l": [1, 2.5, None]}),
        TextPayload("plain text"),
        BinaryPayload(b"\x00\xffbytes"),
        None,
        JsonPayload("json string"),
    ]
    events = []
    for n in range(start, start + count):
        events.append(
            RawEvent(
                seq_nr=n,
                partition=n % 3,
                offset=offset_base + n // 2,
                timestamp=BASE_TIME + timedelta(milliseconds=n),
                payload=kinds[n % len(kinds)],
                tags=frozenset({f"tag{n % 4}", "all"}) if n % 2 else frozenset(),
                headers={"h": str(n)} if n % 3 == 0 else {},
                metadata_json=(
                    f'{{"header":{{"data":{{"n":{n}}}}},"payload":{{"data":"p"}}}}'
                    if n % 5
                    else None
                ),
                origin="host-a" if n % 2 else None,
                version="1.2.3" if n % 3 else None,
            )
        )
    return events


def insert_events(
    session: Session, tables: TableNames, key: Key, segment_size: int, events: list[RawEvent]
) -> None:
    statement = session.prepare(
        f"INSERT INTO {tables.qualified(tables.journal)} "
        "(id, topic, segment, seq_nr, timestamp, partition, offset, origin, version, "
        "meta_record_id, tags, metadata, payload_type, payload_txt, payload_bin, headers) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    params = []
    for e in events:
        payload_type = txt = binary = None
        match e.payload:
            case BinaryPayload(value):
                payload_type, binary = "binary", value
            case TextPayload(value):
                payload_type, txt = "text", value
            case JsonPayload(value):
                payload_type, txt = "json", json.dumps(value)
        params.append(
            (
                key.id,
                key.topic,
                (e.seq_nr - 1) // segment_size,
                e.seq_nr,
                e.timestamp,
                e.partition,
                e.offset,
                e.origin,
                e.version,
                e.meta_record_id,
                set(e.tags) or None,
                e.metadata_json,
                payload_type,
                txt,
                binary,
                e.headers or None,
            )
        )
    results = execute_concurrent_with_args(session, statement, params, concurrency=50)
    assert all(ok for ok, _ in results)


def insert_head(
    session: Session,
    tables: TableNames,
    key: Key,
    *,
    seq_nr: int,
    segment_size: int,
    delete_to: int | None = None,
    partition: int = 0,
    offset: int = 0,
    record_id: uuid.UUID | None = None,
    buckets: int = 10_000,
) -> None:
    session.execute(
        f"INSERT INTO {tables.qualified(tables.metajournal)} "
        "(topic, segment, id, partition, offset, segment_size, seq_nr, delete_to, record_id, "
        "created, updated) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            key.topic,
            metajournal_bucket(key.id, buckets),
            key.id,
            partition,
            offset,
            segment_size,
            seq_nr,
            delete_to,
            record_id,
            BASE_TIME,
            BASE_TIME,
        ),
    )
