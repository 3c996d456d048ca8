"""Fixtures for replication against the real Cassandra node: a store over a migrated keyspace per
test (`tables`, tests/integration/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore

StoreFactory = Callable[..., CassandraReplicatedStore]


@pytest.fixture
def make_store(kj_session: Session, tables: TableNames) -> StoreFactory:
    def make(segment_size: int = 10_000) -> CassandraReplicatedStore:
        return CassandraReplicatedStore(kj_session, tables, segment_size=segment_size)

    return make
