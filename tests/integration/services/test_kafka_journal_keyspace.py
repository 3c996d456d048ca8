"""The real reader on a keyspace kafka-journal created (its own CQL: no quarantine table).

A reader holds SELECT rights only, so it must read such a keyspace as it is: the journal's
status says quarantined records and conflicts are unknown there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from cassandra.cluster import Session
from kjournal.cassandra.settings import TableNames
from kjournal.client import Client
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.cassandra.raw import RawEvent
from tests.integration.cassandra.raw import insert_events
from tests.integration.cassandra.raw import insert_head
from tests.integration.services.conftest import reader_of
from tests.integration.services.support import RunningService
from tests.support.kafka_journal_keyspace import KAFKA_JOURNAL_TABLES
from tests.support.kafka_journal_keyspace import tables_of

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

REPLICATED = [
    Event(SeqNr(1), frozenset({"a"}), JsonPayload({"n": 1})),
    Event(SeqNr(2), payload=TextPayload("two")),
    Event(SeqNr(3), payload=BinaryPayload(b"\x00\x03")),
]
UNREPLICATED = [Event(SeqNr(4), payload=TextPayload("four")), Event(SeqNr(5))]


@pytest.fixture
def scala_reader(
    platform: Endpoints, kafka_journal_keyspace: str, service_logs: Path
) -> Iterator[RunningService]:
    yield from reader_of(platform, kafka_journal_keyspace, service_logs)


def replicate_as_kafka_journal(
    session: Session, tables: TableNames, key: Key, partition: int, offset: int, at: datetime
) -> None:
    """The rows kafka-journal's replicator writes for REPLICATED, appended at (partition,
    offset), with plain CQL: events, head, pointer2."""
    record_id = uuid.uuid4()
    rows = [
        RawEvent(
            seq_nr=event.seq_nr,
            partition=partition,
            offset=offset,
            timestamp=at,
            payload=event.payload,
            tags=event.tags,
            metadata_json='{"header":{},"payload":{}}',
            meta_record_id=record_id,
        )
        for event in REPLICATED
    ]
    insert_events(session, tables, key, 10_000, rows)
    insert_head(
        session,
        tables,
        key,
        seq_nr=3,
        segment_size=10_000,
        partition=partition,
        offset=offset,
        record_id=record_id,
    )
    session.execute(
        f"INSERT INTO {tables.qualified(tables.pointer2)} "
        "(topic, partition, offset, created, updated) VALUES (%s, %s, %s, %s, %s)",
        (key.topic, partition, offset, at, at),
    )


def test_the_reader_reads_a_kafka_journal_keyspace_and_says_quarantine_is_unknown(
    writer: RunningService,
    scala_reader: RunningService,
    session: Session,
    kafka_journal_keyspace: str,
    topic: str,
):
    key = Key(topic, "order-1")
    tables = TableNames(keyspace=kafka_journal_keyspace)
    with Client(writer.url, scala_reader.url, timeout=30) as client:
        first = client.append(key, REPLICATED)
        position = first.partition_offset
        replicate_as_kafka_journal(
            session, tables, key, position.partition, position.offset, first.timestamp
        )
        client.append(key, UNREPLICATED)

        records = list(client.read(key))
        status = client.status(key)

    assert [(r.event.seq_nr, r.event.payload) for r in records] == [
        (e.seq_nr, e.payload) for e in REPLICATED + UNREPLICATED
    ]
    assert records[0].event.tags == frozenset({"a"})
    assert status is not None
    assert (status.seq_nr, status.pointer2, status.unreplicated_actions) == (
        5,
        position.offset,
        1,
    )
    assert not status.quarantine_known
    assert status.conflicts is None
    body = httpx.get(f"{scala_reader.url}/v1/journals/{topic}/order-1", timeout=30).json()
    assert (body["quarantineKnown"], body["conflicts"]) == (False, None)
    # The reader created nothing (it has no DDL rights to) and said what is missing.
    assert tables_of(session, kafka_journal_keyspace) == KAFKA_JOURNAL_TABLES
    assert "has no quarantine table" in scala_reader.log()
