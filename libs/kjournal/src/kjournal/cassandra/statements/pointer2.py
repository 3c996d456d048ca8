"""The `pointer2` table: per (topic, partition), the last offset the replicator applied."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cassandra.query import PreparedStatement
from cassandra.query import Statement

from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import Prepare
from kjournal.cassandra.statements import cql
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns

__all__ = ["POINTER2", "StoreStatements", "insert_cql", "select_cql", "update_cql"]

POINTER2 = TableDef(
    columns=cql_columns(
        "topic text, partition int, offset bigint, created timestamp, updated timestamp"
    ),
    partition_key=("topic", "partition"),
)


def select_cql(tables: TableNames) -> str:
    """Binds (topic, partition); one column, `offset`."""
    return cql.select(tables.qualified(tables.pointer2), "offset", "topic = ? AND partition = ?")


def insert_cql(tables: TableNames) -> str:
    """The first pointer of a partition; binds (topic, partition, offset, created, updated)."""
    return cql.insert(tables.qualified(tables.pointer2), POINTER2.column_names)


def update_cql(tables: TableNames) -> str:
    """Binds (offset, updated, topic, partition)."""
    return (
        f"UPDATE {tables.qualified(tables.pointer2)} SET offset = ?, updated = ? "
        "WHERE topic = ? AND partition = ?"
    )


@dataclass(frozen=True, slots=True)
class StoreStatements:
    """The replicator's store's statements on `pointer2`."""

    select: PreparedStatement
    insert: PreparedStatement
    update: PreparedStatement

    @classmethod
    def prepare(cls, prepare: Prepare, tables: TableNames) -> StoreStatements:
        return cls(
            prepare(select_cql(tables)), prepare(insert_cql(tables)), prepare(update_cql(tables))
        )

    def bind_insert(self, topic: str, partition: int, offset: int, now: datetime) -> Statement:
        return self.insert.bind((topic, partition, offset, now, now))

    def bind_update(self, topic: str, partition: int, offset: int, now: datetime) -> Statement:
        return self.update.bind((offset, now, topic, partition))
