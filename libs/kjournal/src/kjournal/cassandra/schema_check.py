"""Whether a keyspace holds the journal schema, read from `system_schema` without changing it.

`check_schema` is what a service that may not change the schema (the replicator, at start-up)
calls; the schema step (`schema.migrate`, which alone changes it) ends with the same `check`.
Every table must have the columns, types and keys the journal reads and writes; a missing index
is only logged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Final

from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from kjournal.cassandra.session import driver_errors
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements.conflicts import CONFLICTS
from kjournal.cassandra.statements.journal import JOURNAL
from kjournal.cassandra.statements.metajournal import METAJOURNAL
from kjournal.cassandra.statements.pointer2 import POINTER2
from kjournal.cassandra.statements.quarantine import QUARANTINE
from kjournal.cassandra.statements.setting import SETTING
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import index_name
from kjournal.errors import SchemaError

__all__ = [
    "Column",
    "SchemaCatalog",
    "check",
    "check_schema",
    "kjournal_tables",
    "same_type",
    "scala_tables",
]

log = logging.getLogger(__name__)

_MIN_TIMEOUT_S: Final = 120.0  # schema queries and DDL wait longer than a journal's reads


@dataclass(frozen=True)
class Column:
    type: str
    kind: str
    position: int


class SchemaCatalog:
    """What one keyspace holds, read through a synchronous session."""

    def __init__(self, session: Any, settings: CassandraSettings) -> None:
        self.session = session
        self.settings = settings
        self.names = settings.names
        self.keyspace = settings.keyspace
        self.timeout = max(settings.request_timeout, _MIN_TIMEOUT_S)

    def query(self, cql: str, params: Sequence[Any] = (), *, write: bool = False) -> list[Any]:
        level = self.settings.write_consistency if write else self.settings.read_consistency
        statement = SimpleStatement(cql, consistency_level=getattr(ConsistencyLevel, level.value))
        with driver_errors(cql):
            return list(self.session.execute(statement, params, timeout=self.timeout))

    def keyspace_exists(self) -> bool:
        rows = self.query(
            "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = %s",
            (self.keyspace,),
        )
        return bool(rows)

    def tables(self) -> set[str]:
        rows = self.query(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s",
            (self.keyspace,),
        )
        return {row[0] for row in rows}

    def columns(self, table: str) -> dict[str, Column]:
        rows = self.query(
            "SELECT column_name, type, kind, position FROM system_schema.columns "
            "WHERE keyspace_name = %s AND table_name = %s",
            (self.keyspace, table),
        )
        return {row[0]: Column(row[1], row[2], row[3]) for row in rows}

    def indexes(self, table: str) -> set[str]:
        rows = self.query(
            "SELECT index_name FROM system_schema.indexes "
            "WHERE keyspace_name = %s AND table_name = %s",
            (self.keyspace, table),
        )
        return {row[0] for row in rows}


def same_type(found: str, wanted: str) -> bool:
    return _normal(found) == _normal(wanted)


def _normal(type_: str) -> str:
    return "".join(type_.lower().split())


def scala_tables(names: TableNames) -> list[tuple[str, TableDef]]:
    return [
        (names.journal, JOURNAL),
        (names.pointer2, POINTER2),
        (names.setting, SETTING),
        (names.metajournal, METAJOURNAL),
    ]


def kjournal_tables(names: TableNames) -> list[tuple[str, TableDef]]:
    """kjournal's own tables: the replicator writes them, a reader copes without them."""
    return [(names.quarantine, QUARANTINE), (names.conflicts, CONFLICTS)]


def check_schema(session: Any, settings: CassandraSettings) -> None:
    """Raise SchemaError unless the keyspace holds every table and column the journal uses."""
    check(SchemaCatalog(session, settings))


def check(catalog: SchemaCatalog) -> None:
    names = catalog.names
    problems: list[str] = []
    for table, definition in (*scala_tables(names), *kjournal_tables(names)):
        columns = catalog.columns(table)
        if not columns:
            problems.append(f"table {table} is missing")
            continue
        for column, type_ in definition.columns:
            found = columns.get(column)
            if found is None:
                problems.append(f"{table}.{column} is missing")
            elif not same_type(found.type, type_):
                problems.append(f"{table}.{column} is {found.type}, expected {type_}")
        for kind, key in (
            ("partition_key", definition.partition_key),
            ("clustering", definition.clustering),
        ):
            for position, column in enumerate(key):
                found = columns.get(column)
                if found is not None and (found.kind, found.position) != (kind, position):
                    problems.append(f"{table}.{column} is not {kind} #{position}")
    if problems:
        raise SchemaError(
            f"keyspace {catalog.keyspace} does not hold the journal schema: " + "; ".join(problems)
        )
    indexes = catalog.indexes(names.metajournal)
    for column in METAJOURNAL.indexes:
        if index_name(names.metajournal, column) not in indexes:
            log.warning("schema: index %s is missing", index_name(names.metajournal, column))
