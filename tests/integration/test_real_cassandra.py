"""The node started by infra/local is a real Cassandra: DDL, writes and reads work."""

from __future__ import annotations

import uuid

import pytest
from cassandra.cluster import Session

pytestmark = pytest.mark.cassandra


def test_the_node_reports_its_release(cassandra_session: Session):
    row = cassandra_session.execute("SELECT release_version FROM system.local").one()
    assert row.release_version.startswith("5.0.")


def test_a_table_can_be_created_written_and_read(cassandra_session: Session, keyspace: str):
    cassandra_session.execute(
        f"CREATE TABLE {keyspace}.things (id uuid PRIMARY KEY, name text, tags set<text>)"
    )
    key = uuid.uuid4()
    cassandra_session.execute(
        f"INSERT INTO {keyspace}.things (id, name, tags) VALUES (%s, %s, %s)",
        (key, "first", {"a", "b"}),
    )

    row = cassandra_session.execute(
        f"SELECT name, tags FROM {keyspace}.things WHERE id = %s", (key,)
    ).one()

    assert row.name == "first"
    assert row.tags == {"a", "b"}
