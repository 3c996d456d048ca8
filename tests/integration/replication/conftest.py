"""Fixtures for replication against the real Cassandra node: a migrated keyspace per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings, TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal_dev.platform.lifecycle import Endpoints


@pytest.fixture(scope="session")
def writer_session(platform: Endpoints) -> Iterator[Session]:
    """A session built as the replicator builds it (execution profiles, tuple rows)."""
    settings = CassandraSettings(
        contact_points=(platform.cassandra_host,), port=platform.cassandra_port
    )
    session = connect(settings)
    yield session
    session.cluster.shutdown()


@pytest.fixture
def tables(writer_session: Session, keyspace: str) -> TableNames:
    settings = CassandraSettings(keyspace=keyspace)
    migrate(writer_session, settings)
    return settings.names


StoreFactory = Callable[..., CassandraReplicatedStore]


@pytest.fixture
def make_store(writer_session: Session, tables: TableNames) -> StoreFactory:
    def make(segment_size: int = 10_000) -> CassandraReplicatedStore:
        return CassandraReplicatedStore(writer_session, tables, segment_size=segment_size)

    return make
