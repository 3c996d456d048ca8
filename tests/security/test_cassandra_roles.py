"""The access split on the real secured Cassandra node: the reader's role only reads, the
replicator's writes the tables it replicates into but changes no schema, the migrator's changes
the schema but no journal data, the default superuser is gone, a wrong password is refused; the
writer has no Cassandra credentials at all."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from cassandra import Unauthorized
from cassandra.cluster import Session
from kjournal.cassandra.credentials import check_cassandra_credentials
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.errors import CassandraUnavailable
from kjournal.errors import CredentialsRefused
from kjournal_dev.security.cassandra import DEFAULT_SUPERUSER
from kjournal_dev.security.cassandra import role_settings
from kjournal_dev.security.credentials import CASSANDRA_EXPIRY
from kjournal_dev.security.credentials import CASSANDRA_MIGRATOR
from kjournal_dev.security.credentials import CASSANDRA_READER
from kjournal_dev.security.credentials import CASSANDRA_REPLICATOR
from kjournal_writer.settings import Settings as WriterSettings

from tests.security.conftest import KEYSPACE
from tests.security.conftest import SecuredPlatform
from tests.support.reports import reported_table

pytestmark = [pytest.mark.security]

K = KEYSPACE
JOURNAL_WRITES = {
    "INSERT": f"INSERT INTO {K}.pointer2 (topic, partition, offset, created, updated) "
    "VALUES ('journal_probe', 0, 0, toTimestamp(now()), toTimestamp(now()))",
    "UPDATE": f"UPDATE {K}.journal SET origin = 'probe' WHERE id = 'x' "
    "AND topic = 'journal_probe' AND segment = 0 AND seq_nr = 1 AND timestamp = 0",
    "DELETE": f"DELETE FROM {K}.metajournal WHERE topic = 'journal_probe' "
    "AND segment = 0 AND id = 'x'",
}
SCHEMA_CHANGES = {
    "ALTER": f"ALTER TABLE {K}.journal WITH comment = 'changed'",
    "CREATE": f"CREATE TABLE {K}.intruder (k int PRIMARY KEY)",
    "DROP": f"DROP TABLE {K}.pointer2",
}


@pytest.fixture(scope="module")
def observed(pytestconfig: pytest.Config) -> Iterator[dict[str, str]]:
    yield from reported_table(pytestconfig, "Cassandra role denials (real node)", 44)


@contextmanager
def _session(secured: SecuredPlatform, role: str) -> Iterator[Session]:
    """A session as `role`, shut down after the block."""
    session = connect(role_settings(secured.config, role, secured.credentials.cassandra[role]))
    try:
        yield session
    finally:
        session.cluster.shutdown()


def _refused(session: Session, observed: dict[str, str], what: str, cql: str, needs: str) -> None:
    with pytest.raises(Unauthorized) as raised:
        session.execute(cql)
    assert f"has no {needs} permission" in str(raised.value), raised.value
    message = str(raised.value).split('message="', 1)[-1].rstrip('"')
    observed[what] = f"Unauthorized: {message}"


TABLES = CassandraSettings(keyspace=KEYSPACE).names
EVERY_TABLE = (
    TABLES.journal,
    TABLES.metajournal,
    TABLES.pointer2,
    TABLES.setting,
    TABLES.quarantine,
    TABLES.conflicts,
    TABLES.locks,
)


def test_the_readers_role_only_reads(secured: SecuredPlatform, observed: dict[str, str]):
    with _session(secured, CASSANDRA_READER) as session:
        session.execute(f"SELECT * FROM {K}.journal LIMIT 1")
        for verb, cql in JOURNAL_WRITES.items():
            _refused(session, observed, f"{CASSANDRA_READER} {verb}", cql, "MODIFY")
        for verb, cql in SCHEMA_CHANGES.items():
            _refused(session, observed, f"{CASSANDRA_READER} {verb} TABLE", cql, verb)
        for table in EVERY_TABLE:  # MODIFY and ALTER of every table, whatever its columns
            session.execute(f"SELECT * FROM {K}.{table} LIMIT 1")
            _refused(session, {}, "", f"TRUNCATE {K}.{table}", "MODIFY")
            _refused(session, {}, "", f"ALTER TABLE {K}.{table} WITH comment = 'x'", "ALTER")
        observed[f"{CASSANDRA_READER} TRUNCATE, ALTER each of {len(EVERY_TABLE)} tables"] = (
            "Unauthorized (no MODIFY / ALTER permission), every one"
        )


def test_the_expiry_role_only_reads_so_purges_go_through_kafka(
    secured: SecuredPlatform, observed: dict[str, str]
):
    with _session(secured, CASSANDRA_EXPIRY) as session:
        # What the expiry job reads: heads by their expire_on date (the index), and pointer2.
        session.execute(
            f"SELECT id FROM {K}.metajournal WHERE expire_on = '2026-01-01' "
            "AND topic = 'journal_probe' ALLOW FILTERING"
        )
        session.execute(f"SELECT * FROM {K}.pointer2 LIMIT 1")
        for verb, cql in JOURNAL_WRITES.items():
            _refused(session, observed, f"{CASSANDRA_EXPIRY} {verb}", cql, "MODIFY")
        for table in EVERY_TABLE:
            _refused(session, {}, "", f"TRUNCATE {K}.{table}", "MODIFY")
        observed[f"{CASSANDRA_EXPIRY} TRUNCATE each of {len(EVERY_TABLE)} tables"] = (
            "Unauthorized (no MODIFY permission), every one"
        )
        _refused(
            session, observed, f"{CASSANDRA_EXPIRY} DROP TABLE", SCHEMA_CHANGES["DROP"], "DROP"
        )


def test_the_replicators_role_writes_data_but_no_schema(
    secured: SecuredPlatform, observed: dict[str, str]
):
    with _session(secured, CASSANDRA_REPLICATOR) as session:
        session.execute(JOURNAL_WRITES["DELETE"])  # it may write the journal tables
        for verb, cql in SCHEMA_CHANGES.items():
            _refused(session, observed, f"{CASSANDRA_REPLICATOR} {verb} TABLE", cql, verb)
        for table in EVERY_TABLE:
            _refused(session, {}, "", f"ALTER TABLE {K}.{table} WITH comment = 'x'", "ALTER")
        observed[f"{CASSANDRA_REPLICATOR} ALTER each of {len(EVERY_TABLE)} tables"] = (
            "Unauthorized (no ALTER permission), every one"
        )
        setting = f"UPDATE {K}.setting SET value = 'x' WHERE key = 'probe'"
        _refused(session, observed, f"{CASSANDRA_REPLICATOR} UPDATE setting", setting, "MODIFY")


def test_the_migrators_role_changes_schema_but_no_journal_data(
    secured: SecuredPlatform, observed: dict[str, str]
):
    with _session(secured, CASSANDRA_MIGRATOR) as session:
        session.execute(SCHEMA_CHANGES["ALTER"])
        for verb, cql in JOURNAL_WRITES.items():
            _refused(session, observed, f"{CASSANDRA_MIGRATOR} {verb}", cql, "MODIFY")
        _refused(
            session, observed, f"{CASSANDRA_MIGRATOR} DROP TABLE", SCHEMA_CHANGES["DROP"], "DROP"
        )


def test_the_default_superuser_is_gone_and_a_wrong_password_is_refused(
    secured: SecuredPlatform, observed: dict[str, str]
):
    user, password = DEFAULT_SUPERUSER
    with pytest.raises(CassandraUnavailable, match="Provided username cassandra"):
        connect(role_settings(secured.config, user, password)).cluster.shutdown()
    observed["default superuser cassandra/cassandra"] = "AuthenticationFailed: Bad credentials"
    wrong = role_settings(secured.config, CASSANDRA_READER, "not-the-password")
    with pytest.raises(CredentialsRefused) as raised:
        check_cassandra_credentials(wrong)
    assert str(raised.value) == (
        f"Cassandra at {secured.config.host}:{secured.config.cassandra_port} refused the "
        f"credentials of role '{CASSANDRA_READER}'"
    )
    observed["wrong password"] = str(raised.value)


def test_the_writer_has_no_cassandra_settings(
    observed: dict[str, str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("KJOURNAL_CASSANDRA__USERNAME", CASSANDRA_READER)
    monkeypatch.setenv("KJOURNAL_CASSANDRA__PASSWORD", "anything")
    assert "cassandra" not in WriterSettings.model_fields
    assert not hasattr(WriterSettings(), "cassandra")  # the variables are ignored
    observed["writer"] = "no Cassandra section in its settings (KJOURNAL_CASSANDRA__* ignored)"
