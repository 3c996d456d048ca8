"""The `pointer2` table: per (topic, partition), the last offset the replicator applied."""

from __future__ import annotations

from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.tables import TableDef

__all__ = ["POINTER2", "insert_cql", "select_cql", "update_cql"]

POINTER2 = TableDef(
    columns=(
        ("topic", "text"),
        ("partition", "int"),
        ("offset", "bigint"),
        ("created", "timestamp"),
        ("updated", "timestamp"),
    ),
    partition_key=("topic", "partition"),
)


def select_cql(tables: TableNames) -> str:
    """Binds (topic, partition); one column, `offset`."""
    return (
        f"SELECT offset FROM {tables.qualified(tables.pointer2)} WHERE topic = ? AND partition = ?"
    )


def insert_cql(tables: TableNames) -> str:
    """The first pointer of a partition; binds (topic, partition, offset, created, updated)."""
    return (
        f"INSERT INTO {tables.qualified(tables.pointer2)} "
        "(topic, partition, offset, created, updated) VALUES (?, ?, ?, ?, ?)"
    )


def update_cql(tables: TableNames) -> str:
    """Binds (offset, updated, topic, partition)."""
    return (
        f"UPDATE {tables.qualified(tables.pointer2)} SET offset = ?, updated = ? "
        "WHERE topic = ? AND partition = ?"
    )
