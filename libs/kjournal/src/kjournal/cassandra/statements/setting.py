"""The `setting` table: key/value pairs, of which the schema versions are the ones used."""

from __future__ import annotations

from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns

__all__ = ["SETTING", "insert_cql", "select_value_cql"]

SETTING = TableDef(
    columns=cql_columns("key text, value text, timestamp timestamp, origin text, metadata text"),
    partition_key=("key",),
)


def select_value_cql(tables: TableNames) -> str:
    """Binds (key,) with the driver's `%s` markers (the schema step runs unprepared)."""
    return f"SELECT value FROM {tables.qualified(tables.setting)} WHERE key = %s"


def insert_cql(tables: TableNames) -> str:
    """Binds (key, value, timestamp, origin) with `%s` markers."""
    return (
        f"INSERT INTO {tables.qualified(tables.setting)} (key, value, timestamp, origin) "
        "VALUES (%s, %s, %s, %s)"
    )
