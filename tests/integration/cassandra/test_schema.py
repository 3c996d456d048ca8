"""Schema creation and migrations on the real node."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.schema import KJOURNAL_SCHEMA_VERSION
from kjournal.cassandra.schema import KJOURNAL_SCHEMA_VERSION_KEY
from kjournal.cassandra.schema import SCHEMA_VERSION_KEY
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.schema_check import check_schema
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import CassandraTables
from kjournal.cassandra.statements.conflicts import CONFLICTS
from kjournal.cassandra.statements.journal import JOURNAL
from kjournal.cassandra.statements.locks import LOCKS
from kjournal.cassandra.statements.metajournal import METAJOURNAL
from kjournal.cassandra.statements.pointer2 import POINTER2
from kjournal.cassandra.statements.quarantine import QUARANTINE
from kjournal.cassandra.statements.setting import SETTING
from kjournal.errors import SchemaError

from tests.support.platform import unique_name

pytestmark = pytest.mark.cassandra

EXPECTED = {
    "journal": JOURNAL,
    "metajournal": METAJOURNAL,
    "pointer2": POINTER2,
    "setting": SETTING,
    "quarantine": QUARANTINE,
    "conflicts": CONFLICTS,
    "locks": LOCKS,
}

# What a keyspace looked like before the first migration step: journal without headers, version
# and meta_record_id, metajournal without record_id, the old `pointer` and `metadata` tables.
OLD_TABLES = [
    """CREATE TABLE {ks}.journal (
        id text, topic text, segment bigint, seq_nr bigint, partition int, offset bigint,
        timestamp timestamp, origin text, tags set<text>, metadata text, payload_type text,
        payload_txt text, payload_bin blob,
        PRIMARY KEY ((id, topic, segment), seq_nr, timestamp))""",
    """CREATE TABLE {ks}.metajournal (
        id text, topic text, segment bigint, partition int, offset bigint, segment_size int,
        seq_nr bigint, delete_to bigint, created timestamp, created_date date, updated timestamp,
        expire_after duration, expire_on date, origin text, properties map<text, text>,
        metadata text, PRIMARY KEY ((topic, segment), id))""",
    """CREATE TABLE {ks}.pointer (
        topic text, partition int, offset bigint, created timestamp, updated timestamp,
        PRIMARY KEY ((topic), partition))""",
    """CREATE TABLE {ks}.metadata (
        id text, topic text, partition int, offset bigint, segment_size int, seq_nr bigint,
        delete_to bigint, created timestamp, updated timestamp, origin text,
        properties map<text, text>, metadata text, PRIMARY KEY ((topic), id))""",
]


def create_old_keyspace(session: Session, keyspace: str) -> None:
    for cql in OLD_TABLES:
        session.execute(cql.format(ks=keyspace))


def tables_of(session: Session, keyspace: str) -> set[str]:
    rows = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,)
    )
    return {row[0] for row in rows}


def columns_of(session: Session, keyspace: str, table: str) -> dict[str, tuple[str, str, int]]:
    rows = session.execute(
        "SELECT column_name, type, kind, position FROM system_schema.columns "
        "WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, table),
    )
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def settings_of(session: Session, keyspace: str) -> dict[str, tuple[str, object]]:
    rows = session.execute(f"SELECT key, value, timestamp FROM {keyspace}.setting")
    return {row[0]: (row[1], row[2]) for row in rows}


def record(session: Session, keyspace: str, key: str, value: str) -> None:
    session.execute(f"INSERT INTO {keyspace}.setting (key, value) VALUES (%s, %s)", (key, value))


def schema_snapshot(session: Session, keyspace: str) -> dict[str, object]:
    return {table: columns_of(session, keyspace, table) for table in tables_of(session, keyspace)}


def assert_current_schema(session: Session, keyspace: str) -> None:
    for table, definition in EXPECTED.items():
        columns = columns_of(session, keyspace, table)
        assert {name: spec[0] for name, spec in columns.items()} == dict(definition.columns)
        for position, column in enumerate(definition.partition_key):
            assert columns[column][1:] == ("partition_key", position)
        for position, column in enumerate(definition.clustering):
            assert columns[column][1:] == ("clustering", position)


def test_a_fresh_keyspace_gets_every_table_and_version_8(kj_session: Session, keyspace: str):
    assert migrate(kj_session, CassandraSettings(keyspace=keyspace)) == 8

    assert tables_of(kj_session, keyspace) == set(EXPECTED)
    assert_current_schema(kj_session, keyspace)
    indexes = kj_session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s", (keyspace,)
    )
    assert {row[0] for row in indexes} == {
        "metajournal_created_date_idx",
        "metajournal_expire_on_idx",
    }
    versions = settings_of(kj_session, keyspace)
    assert versions[SCHEMA_VERSION_KEY][0] == "8"
    assert versions[KJOURNAL_SCHEMA_VERSION_KEY][0] == str(KJOURNAL_SCHEMA_VERSION)


def test_migrating_twice_changes_nothing(kj_session: Session, keyspace: str):
    settings = CassandraSettings(keyspace=keyspace)
    migrate(kj_session, settings)
    schema, versions = schema_snapshot(kj_session, keyspace), settings_of(kj_session, keyspace)

    assert migrate(kj_session, settings) == 8

    assert schema_snapshot(kj_session, keyspace) == schema
    assert settings_of(kj_session, keyspace) == versions  # not even re-written


def test_custom_table_names(kj_session: Session, keyspace: str):
    tables = CassandraTables(journal="events", metajournal="heads", setting="settings")

    assert migrate(kj_session, CassandraSettings(keyspace=keyspace, tables=tables)) == 8

    assert tables_of(kj_session, keyspace) == {
        "events",
        "heads",
        "pointer2",
        "settings",
        "quarantine",
        "conflicts",
        "locks",
    }
    indexes = kj_session.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = %s", (keyspace,)
    )
    assert {row[0] for row in indexes} == {"heads_created_date_idx", "heads_expire_on_idx"}


@pytest.fixture
def missing_keyspace(kj_session: Session) -> Iterator[str]:
    name = unique_name("kjt")
    yield name
    kj_session.execute(f"DROP KEYSPACE IF EXISTS {name}")


def test_the_keyspace_is_created_when_allowed(kj_session: Session, missing_keyspace: str):
    assert migrate(kj_session, CassandraSettings(keyspace=missing_keyspace)) == 8

    row = kj_session.execute(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
        (missing_keyspace,),
    ).one()
    assert row[0]["class"].endswith("SimpleStrategy")
    assert row[0]["replication_factor"] == "1"


def test_a_missing_keyspace_is_an_error_when_creation_is_not_allowed(
    kj_session: Session, missing_keyspace: str
):
    with pytest.raises(SchemaError, match="does not exist"):
        migrate(
            kj_session, CassandraSettings(keyspace=missing_keyspace, auto_create_keyspace=False)
        )


def test_missing_tables_are_an_error_when_creation_is_not_allowed(
    kj_session: Session, keyspace: str
):
    with pytest.raises(SchemaError, match="setting does not exist"):
        migrate(kj_session, CassandraSettings(keyspace=keyspace), create_tables=False)


def test_an_old_keyspace_is_upgraded_step_by_step(
    kj_session: Session, keyspace: str, caplog: pytest.LogCaptureFixture
):
    create_old_keyspace(kj_session, keyspace)
    event_id = uuid.uuid4()
    kj_session.execute(
        f"INSERT INTO {keyspace}.journal (id, topic, segment, seq_nr, timestamp, payload_txt) "
        "VALUES ('a', 't', 0, 1, toTimestamp(now()), %s)",
        (str(event_id),),
    )
    caplog.set_level(logging.INFO, logger="kjournal.cassandra.schema")

    assert migrate(kj_session, CassandraSettings(keyspace=keyspace)) == 8

    assert tables_of(kj_session, keyspace) == set(EXPECTED)
    assert_current_schema(kj_session, keyspace)
    steps = [m for m in caplog.messages if m.startswith(f"schema: {SCHEMA_VERSION_KEY} step")]
    assert [m.split(":")[1].split()[-1] for m in steps] == [str(n) for n in range(9)]
    kept = kj_session.execute(f"SELECT payload_txt FROM {keyspace}.journal").one()
    assert kept[0] == str(event_id)


def test_a_partly_migrated_keyspace_runs_the_remaining_steps(
    kj_session: Session, keyspace: str, caplog: pytest.LogCaptureFixture
):
    # As left by a run that stopped after step 3: headers, version, pointer2 exist, metadata gone.
    create_old_keyspace(kj_session, keyspace)
    for cql in (
        f"ALTER TABLE {keyspace}.journal ADD headers map<text, text>",
        f"ALTER TABLE {keyspace}.journal ADD version text",
        f"DROP TABLE {keyspace}.metadata",
        *POINTER2.create_cql(keyspace, "pointer2"),
        *SETTING.create_cql(keyspace, "setting"),
    ):
        kj_session.execute(cql)
    record(kj_session, keyspace, SCHEMA_VERSION_KEY, "3")
    caplog.set_level(logging.INFO, logger="kjournal.cassandra.schema")

    assert migrate(kj_session, CassandraSettings(keyspace=keyspace)) == 8

    steps = [m for m in caplog.messages if m.startswith(f"schema: {SCHEMA_VERSION_KEY} step")]
    assert [int(m.split(":")[1].split()[-1]) for m in steps] == [4, 5, 6, 7, 8]
    assert_current_schema(kj_session, keyspace)
    assert "pointer" not in tables_of(kj_session, keyspace)
    assert settings_of(kj_session, keyspace)[SCHEMA_VERSION_KEY][0] == "8"


def test_a_conflicting_column_type_fails_loudly_and_keeps_the_version(
    kj_session: Session, keyspace: str
):
    create_old_keyspace(kj_session, keyspace)
    kj_session.execute(f"ALTER TABLE {keyspace}.metajournal ADD record_id text")
    settings = CassandraSettings(keyspace=keyspace)

    with pytest.raises(
        SchemaError, match=r"step 5 .*record_id is text, but the journal needs uuid"
    ):
        migrate(kj_session, settings)

    assert settings_of(kj_session, keyspace)[SCHEMA_VERSION_KEY][0] == "4"
    assert "pointer" in tables_of(kj_session, keyspace)  # step 6 never ran
    with pytest.raises(SchemaError, match=r"step 5"):
        migrate(kj_session, settings)  # and it stays failed, never skipped
    assert settings_of(kj_session, keyspace)[SCHEMA_VERSION_KEY][0] == "4"


def test_a_statement_cassandra_rejects_fails_loudly_and_keeps_the_version(
    kj_session: Session, keyspace: str
):
    # Cassandra refuses to re-add a dropped column with another type: a real server-side error.
    create_old_keyspace(kj_session, keyspace)
    kj_session.execute(f"ALTER TABLE {keyspace}.journal ADD meta_record_id text")
    kj_session.execute(f"ALTER TABLE {keyspace}.journal DROP meta_record_id")

    with pytest.raises(SchemaError, match=r"step 4 .*incompatible with previously dropped") as err:
        migrate(kj_session, CassandraSettings(keyspace=keyspace))

    assert type(err.value.__cause__).__module__.startswith("kjournal")
    assert settings_of(kj_session, keyspace)[SCHEMA_VERSION_KEY][0] == "3"


def test_a_newer_version_runs_nothing(
    kj_session: Session, keyspace: str, caplog: pytest.LogCaptureFixture
):
    settings = CassandraSettings(keyspace=keyspace)
    migrate(kj_session, settings)
    record(kj_session, keyspace, SCHEMA_VERSION_KEY, "9")
    # Step 6 would drop this table if it ran.
    kj_session.execute(f"CREATE TABLE {keyspace}.pointer (topic text PRIMARY KEY)")

    assert migrate(kj_session, settings) == 9

    assert "pointer" in tables_of(kj_session, keyspace)
    assert any("newer than the 8" in message for message in caplog.messages)


def test_a_version_that_is_not_a_number_is_an_error(kj_session: Session, keyspace: str):
    settings = CassandraSettings(keyspace=keyspace)
    migrate(kj_session, settings)
    record(kj_session, keyspace, SCHEMA_VERSION_KEY, "eight")

    with pytest.raises(SchemaError, match="not a schema version"):
        migrate(kj_session, settings)


def test_the_check_refuses_a_table_of_another_shape(kj_session: Session, keyspace: str):
    kj_session.execute(
        f"CREATE TABLE {keyspace}.quarantine (topic text, id text, partition int, offset bigint, "
        "reason text, PRIMARY KEY ((topic), id, partition, offset))"
    )

    with pytest.raises(SchemaError, match=r"quarantine.id is not partition_key #1"):
        migrate(kj_session, CassandraSettings(keyspace=keyspace))


def test_check_schema_on_a_current_keyspace(kj_session: Session, keyspace: str):
    settings = CassandraSettings(keyspace=keyspace)
    with pytest.raises(SchemaError, match="journal is missing"):
        check_schema(kj_session, settings)
    migrate(kj_session, settings)

    check_schema(kj_session, settings)


def test_a_session_without_kjournal_profiles_works_too(cassandra_session: Session, keyspace: str):
    # kjournal-dev's schema step connects with a plain Cluster.
    assert migrate(cassandra_session, CassandraSettings(keyspace=keyspace)) == 8
