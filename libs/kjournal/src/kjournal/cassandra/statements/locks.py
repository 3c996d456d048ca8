"""The `locks` table of cassandra-sync, which kafka-journal's schema migration locks with.

kjournal never uses it; its schema step creates it (same columns) so that a Scala service
started with `auto-create = false` against a keyspace kjournal created finds it.
"""

from __future__ import annotations

from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns

__all__ = ["LOCKS"]

LOCKS = TableDef(
    columns=cql_columns("id text, expiry_ms bigint, timestamp timestamp, metadata text"),
    partition_key=("id",),
)
