"""Fixtures for the eventual store against the real Cassandra node."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings, TableNames
from kjournal_dev.platform.lifecycle import Endpoints


@pytest.fixture(scope="session")
def cassandra_settings(platform: Endpoints) -> CassandraSettings:
    return CassandraSettings(
        contact_points=(platform.cassandra_host,), port=platform.cassandra_port
    )


@pytest.fixture(scope="session")
def kj_session(cassandra_settings: CassandraSettings) -> Iterator[Session]:
    """A session built the way kjournal builds them (execution profiles, tuple rows)."""
    session = connect(cassandra_settings)
    yield session
    session.cluster.shutdown()


@pytest.fixture
def tables(kj_session: Session, keyspace: str) -> TableNames:
    """A fresh keyspace migrated to the current schema."""
    settings = CassandraSettings(keyspace=keyspace)
    migrate(kj_session, settings)
    return settings.names
