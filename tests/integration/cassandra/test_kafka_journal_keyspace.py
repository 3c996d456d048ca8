"""A keyspace created by kafka-journal's own CQL (no quarantine, no conflicts table): our reader
opens it without DDL and reads it; the schema step adds kjournal's tables where it may."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from contextlib import aclosing

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.schema import KJOURNAL_SCHEMA_VERSION
from kjournal.cassandra.schema import KJOURNAL_SCHEMA_VERSION_KEY
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.schema_check import check_schema
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.errors import SchemaError
from kjournal.model import Key
from kjournal.model import SeqNr

from tests.integration.cassandra.raw import insert_events
from tests.integration.cassandra.raw import insert_head
from tests.integration.cassandra.raw import sample_events
from tests.integration.cassandra.test_schema import assert_current_schema
from tests.integration.cassandra.test_schema import columns_of
from tests.integration.cassandra.test_schema import settings_of
from tests.integration.cassandra.test_schema import tables_of
from tests.support.kafka_journal_keyspace import KAFKA_JOURNAL_TABLES
from tests.support.platform import unique_name

pytestmark = [pytest.mark.cassandra, pytest.mark.anyio]

KEY = Key("journal", "order-1")
SEGMENT_SIZE = 10_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_cql_makes_kafka_journals_keyspace(kj_session: Session, kafka_journal_keyspace: str):
    assert tables_of(kj_session, kafka_journal_keyspace) == KAFKA_JOURNAL_TABLES
    assert settings_of(kj_session, kafka_journal_keyspace)["schema-version"][0] == "8"
    # Column for column what kjournal's own schema step makes of these tables.
    ours = unique_name("kjt")
    migrate(kj_session, CassandraSettings(keyspace=ours))
    try:
        for table in KAFKA_JOURNAL_TABLES:
            assert columns_of(kj_session, kafka_journal_keyspace, table) == columns_of(
                kj_session, ours, table
            ), table
    finally:
        kj_session.execute(f"DROP KEYSPACE IF EXISTS {ours}")


async def test_the_reader_reads_it_without_creating_anything(
    kj_session: Session, kafka_journal_keyspace: str, caplog: pytest.LogCaptureFixture
):
    tables = TableNames(keyspace=kafka_journal_keyspace)
    events = sample_events(7)
    record_id = uuid.uuid4()
    insert_events(
        kj_session,
        tables,
        KEY,
        SEGMENT_SIZE,
        [dataclasses.replace(event, meta_record_id=record_id) for event in events],
    )
    insert_head(kj_session, tables, KEY, seq_nr=7, segment_size=SEGMENT_SIZE, record_id=record_id)

    with caplog.at_level(logging.WARNING, logger="kjournal.cassandra.reader"):
        reader = await CassandraEventualReader.create(kj_session, tables)
    head = await reader.head(KEY)
    assert head is not None
    async with aclosing(reader.events(KEY, head, SeqNr(1))) as stream:
        read = [record async for record in stream]

    assert read == [event.expected() for event in events]
    assert not reader.quarantine_known
    assert await reader.quarantined(KEY) is None
    assert await reader.conflicts(KEY, 20) is None
    assert tables_of(kj_session, kafka_journal_keyspace) == KAFKA_JOURNAL_TABLES
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("has no quarantine table" in line for line in warnings), warnings
    assert any("has no conflicts table" in line for line in warnings), warnings


async def test_the_schema_step_adds_kjournals_tables_and_leaves_scalas_version(
    kj_session: Session, kafka_journal_keyspace: str
):
    tables = TableNames(keyspace=kafka_journal_keyspace)
    settings = CassandraSettings(keyspace=kafka_journal_keyspace)
    insert_events(kj_session, tables, KEY, SEGMENT_SIZE, sample_events(3))
    insert_head(kj_session, tables, KEY, seq_nr=3, segment_size=SEGMENT_SIZE)
    scala_version = settings_of(kj_session, kafka_journal_keyspace)["schema-version"]
    # The replicator only checks the schema; the schema step (DDL rights) must run first.
    with pytest.raises(SchemaError, match="quarantine"):
        check_schema(kj_session, settings)

    assert migrate(kj_session, settings) == 8

    assert tables_of(kj_session, kafka_journal_keyspace) == {
        *KAFKA_JOURNAL_TABLES,
        "quarantine",
        "conflicts",
    }
    assert_current_schema(kj_session, kafka_journal_keyspace)
    check_schema(kj_session, settings)
    versions = settings_of(kj_session, kafka_journal_keyspace)
    assert versions["schema-version"] == scala_version  # untouched, not even re-written
    assert versions[KJOURNAL_SCHEMA_VERSION_KEY][0] == str(KJOURNAL_SCHEMA_VERSION)
    reader = await CassandraEventualReader.create(kj_session, tables)
    assert reader.quarantine_known
    assert await reader.conflicts(KEY, 20) == []
    head = await reader.head(KEY)
    assert head is not None
    async with aclosing(reader.events(KEY, head, SeqNr(1))) as stream:
        assert [record.seq_nr async for record in stream] == [1, 2, 3]
