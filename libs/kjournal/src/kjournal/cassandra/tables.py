"""`TableDef`: a table's shape, from which CREATE TABLE and the schema checks are derived.

Each table's definition sits in its statements module (`statements/journal.py`, ...). The column
lists are the single source for CREATE TABLE, for the migrations' tolerant ALTERs and for the
post-migration check, so the three cannot drift apart. Types are spelled as
`system_schema.columns` reports them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TableDef", "cql_columns", "index_name"]

# One `name type` of a column list and the comma after it; a collection type keeps its commas.
_COLUMN = re.compile(r"\s*(\w+)\s+(\w+(?:<[\w, ]+>)?)\s*(?:,|\Z)")


@dataclass(frozen=True, slots=True)
class TableDef:
    """A table's shape: columns in declaration order, partition key, clustering columns, indexes.

    `indexes` are the indexed columns; an index is named `<table>_<column>_idx` as in Scala.
    """

    columns: tuple[tuple[str, str], ...]
    partition_key: tuple[str, ...]
    clustering: tuple[str, ...] = ()
    indexes: tuple[str, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    def column_type(self, column: str) -> str:
        return dict(self.columns)[column]

    def create_cql(self, keyspace: str, table: str) -> list[str]:
        """CREATE TABLE IF NOT EXISTS, then one CREATE INDEX IF NOT EXISTS per index."""
        columns = ",\n  ".join(f"{name} {type_}" for name, type_ in self.columns)
        partition = ", ".join(self.partition_key)
        key = ", ".join((f"({partition})", *self.clustering))
        statements = [
            f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (\n  {columns},\n  PRIMARY KEY ({key}))"
        ]
        statements += [
            f"CREATE INDEX IF NOT EXISTS {index_name(table, column)} ON {keyspace}.{table} ({column})"
            for column in self.indexes
        ]
        return statements


def cql_columns(declared: str) -> tuple[tuple[str, str], ...]:
    """Columns spelled as in CREATE TABLE: `"id text, tags set<text>, headers map<text, text>"`."""
    columns: list[tuple[str, str]] = []
    at = 0
    while at < len(declared):
        column = _COLUMN.match(declared, at)
        if column is None:
            raise ValueError(f"not a `name type` column at {declared[at:]!r}")
        name, type_ = column.groups()
        columns.append((name, type_))
        at = column.end()
    return tuple(columns)


def index_name(table: str, column: str) -> str:
    return f"{table}_{column}_idx"
