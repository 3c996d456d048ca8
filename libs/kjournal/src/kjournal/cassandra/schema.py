"""Keyspace creation and schema migrations: the Scala library's schema version 8, plus ours.

`migrate` brings a keyspace to the current schema and returns the Scala schema version recorded:

1. Create the keyspace if it is missing (when allowed).
2. Create the missing tables among journal, metajournal (+ its two indexes), pointer2 and setting
   (when allowed). "Fresh" = all four were created now.
3. Scala steps, recorded in `setting` under `schema-version` as the index of the last step applied
   (a complete schema records "8"): fresh → record 8 without running anything; no record → run
   every step; a record → run the steps after it; a record newer than we know → run nothing.
4. kjournal steps (the quarantine and conflicts tables, cassandra-sync's locks table), recorded
   the same way under `kjournal-schema-version`.
   A separate key, so a future Scala step #9 can never be mistaken for one of ours.
5. Check that every table has the columns, types and keys we read and write (`schema_check.py`,
   whose `check_schema` is all of this that a service that may not change the schema runs).

Each step is idempotent on its own: ALTER ... ADD first looks at the column (present with the same
type → nothing to do; another type → SchemaError), drops and creates use IF [NOT] EXISTS. Unlike the
Scala library (issue #923), a failing step raises SchemaError, stops the run, and leaves the
recorded version at the last step that succeeded. After every DDL statement we wait for schema
agreement. There is no DDL lock: run one migration at a time (the schema Job does).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final

from cassandra import InvalidRequest

from kjournal.cassandra.schema_check import SchemaCatalog
from kjournal.cassandra.schema_check import check
from kjournal.cassandra.schema_check import same_type
from kjournal.cassandra.schema_check import scala_tables
from kjournal.cassandra.session import driver_errors
from kjournal.cassandra.settings import CassandraReplication
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import setting
from kjournal.cassandra.statements.conflicts import CONFLICTS
from kjournal.cassandra.statements.journal import JOURNAL
from kjournal.cassandra.statements.locks import LOCKS
from kjournal.cassandra.statements.metajournal import METAJOURNAL
from kjournal.cassandra.statements.pointer2 import POINTER2
from kjournal.cassandra.statements.quarantine import QUARANTINE
from kjournal.cassandra.tables import TableDef
from kjournal.errors import SchemaError

__all__ = [
    "KJOURNAL_SCHEMA_VERSION",
    "KJOURNAL_SCHEMA_VERSION_KEY",
    "SCALA_SCHEMA_VERSION",
    "SCHEMA_VERSION_KEY",
    "migrate",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION_KEY: Final = "schema-version"
KJOURNAL_SCHEMA_VERSION_KEY: Final = "kjournal-schema-version"

# Tables the Scala library dropped; their names were never configurable.
_OLD_METADATA_TABLE: Final = "metadata"
_OLD_POINTER_TABLE: Final = "pointer"


_SCHEMA_AGREEMENT_TIMEOUT_S: Final = 60.0


@dataclass(frozen=True)
class _Options:
    """What one `migrate` may do, and where (from CassandraSettings and its arguments)."""

    settings: CassandraSettings
    create_tables: bool = True
    origin: str | None = None  # written to `setting.origin` with each version; host name if None

    @property
    def names(self) -> TableNames:
        return self.settings.names


# --- the steps -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    description: str
    apply: Callable[[_Ddl], None]


def _add_column(table: str, definition: TableDef, column: str) -> _Step:
    """`table` is the TableNames field naming the table (so is `_create_table`'s)."""
    type_ = definition.column_type(column)
    return _Step(
        f"add {column} {type_}",
        lambda ddl: ddl.add_column(_name(ddl.names, table), column, type_),
    )


def _drop_table(name: str) -> _Step:
    return _Step(f"drop table {name}", lambda ddl: ddl.drop_table(name))


def _create_table(table: str, definition: TableDef) -> _Step:
    return _Step(
        f"create table {table}",
        lambda ddl: ddl.create_table(_name(ddl.names, table), definition),
    )


def _name(names: TableNames, table: str) -> str:
    name: str = getattr(names, table)
    return name


# The Scala library's `SetupSchema.migrations`, in order; the stored version is the index of the
# last one applied. Steps 7 and 8 repeat 2 and 6 keyspace-qualified in Scala (its first versions
# ran unqualified and failed silently outside the session keyspace); ours are always qualified,
# so they are no-ops here, kept so the numbering matches.
SCALA_STEPS: Final[tuple[_Step, ...]] = (
    _add_column("journal", JOURNAL, "headers"),
    _add_column("journal", JOURNAL, "version"),
    _drop_table(_OLD_METADATA_TABLE),
    _create_table("pointer2", POINTER2),
    _add_column("journal", JOURNAL, "meta_record_id"),
    _add_column("metajournal", METAJOURNAL, "record_id"),
    _drop_table(_OLD_POINTER_TABLE),
    _drop_table(_OLD_METADATA_TABLE),
    _drop_table(_OLD_POINTER_TABLE),
)
SCALA_SCHEMA_VERSION: Final = len(SCALA_STEPS) - 1

# Our own steps, recorded under KJOURNAL_SCHEMA_VERSION_KEY with the same index semantics.
KJOURNAL_STEPS: Final[tuple[_Step, ...]] = (
    _create_table("quarantine", QUARANTINE),
    _create_table("conflicts", CONFLICTS),
    # cassandra-sync's, for Scala services that will not create it themselves (auto-create off)
    _create_table("locks", LOCKS),
)
KJOURNAL_SCHEMA_VERSION: Final = len(KJOURNAL_STEPS) - 1


# --- DDL helper ------------------------------------------------------------------------------


class _Ddl(SchemaCatalog):
    """Schema changes on one keyspace through a synchronous session."""

    def __init__(self, session: Any, options: _Options) -> None:
        super().__init__(session, options.settings)
        self.options = options

    def execute_ddl(self, cql: str) -> None:
        log.info("schema: %s", " ".join(cql.split()))
        with driver_errors(cql):
            result = self.session.execute(cql, timeout=self.timeout)
            agreed = result.response_future.is_schema_agreed
            if not agreed:
                agreed = self.session.cluster.control_connection.wait_for_schema_agreement(
                    wait_time=_SCHEMA_AGREEMENT_TIMEOUT_S
                )
        if not agreed:
            raise SchemaError(
                f"nodes did not agree on the schema within "
                f"{_SCHEMA_AGREEMENT_TIMEOUT_S} s after: {cql}"
            )

    def add_column(self, table: str, column: str, type_: str) -> None:
        existing = self.columns(table)
        if not existing:
            raise SchemaError(f"cannot add {column} to {self.keyspace}.{table}: no such table")
        if column in existing:
            self._check_type(table, column, type_, existing[column].type)
            return
        try:
            self.execute_ddl(f"ALTER TABLE {self.keyspace}.{table} ADD {column} {type_}")
        except SchemaError as exc:
            # Someone else may have added it between our look and the ALTER.
            if not isinstance(exc.__cause__, InvalidRequest):
                raise
            now = self.columns(table).get(column)
            if now is None:
                raise
            self._check_type(table, column, type_, now.type)

    def _check_type(self, table: str, column: str, wanted: str, found: str) -> None:
        if not same_type(found, wanted):
            raise SchemaError(
                f"{self.keyspace}.{table}.{column} is {found}, but the journal needs {wanted}"
            )

    def drop_table(self, table: str) -> None:
        if table in self.tables():
            self.execute_ddl(f"DROP TABLE IF EXISTS {self.keyspace}.{table}")

    def create_table(self, table: str, definition: TableDef) -> None:
        for cql in definition.create_cql(self.keyspace, table):
            self.execute_ddl(cql)

    def recorded_version(self, key: str) -> int | None:
        rows = self.query(setting.select_value_cql(self.names), (key,))
        if not rows or rows[0][0] is None:
            return None
        text = rows[0][0]
        try:
            return int(text)
        except ValueError:
            raise SchemaError(f"setting {key!r} holds {text!r}, not a schema version") from None

    def record_version(self, key: str, version: int) -> None:
        self.query(
            setting.insert_cql(self.names),
            (key, str(version), datetime.now(UTC), self.options.origin or socket.gethostname()),
            write=True,
        )


# --- migrate ---------------------------------------------------------------------------------


def migrate(
    session: Any,
    settings: CassandraSettings,
    *,
    create_tables: bool = True,
    origin: str | None = None,
) -> int:
    """Create or upgrade the keyspace of `settings`; returns the Scala schema version recorded.

    `session` is a connected cassandra-driver Session (any execution profile setup). The keyspace
    is created only if `settings.auto_create_keyspace`, missing tables only if `create_tables`;
    `origin` (default: the host name) is recorded with each version. Raises SchemaError when a
    step fails, the keyspace or a table is missing and may not be created, or the resulting
    schema lacks what the journal needs.
    """
    ddl = _Ddl(session, _Options(settings, create_tables, origin))
    _ensure_keyspace(ddl)
    fresh = _create_tables(ddl)
    version = _run_steps(ddl, SCHEMA_VERSION_KEY, SCALA_STEPS, fresh=fresh)
    _run_steps(ddl, KJOURNAL_SCHEMA_VERSION_KEY, KJOURNAL_STEPS, fresh=False)
    check(ddl)
    return version


def _ensure_keyspace(ddl: _Ddl) -> None:
    if ddl.keyspace_exists():
        return
    if not ddl.settings.auto_create_keyspace:
        raise SchemaError(f"keyspace {ddl.keyspace} does not exist and may not be created")
    ddl.execute_ddl(
        f"CREATE KEYSPACE IF NOT EXISTS {ddl.keyspace} "
        f"WITH replication = {_replication_cql(ddl.settings.replication)}"
    )


def _replication_cql(replication: CassandraReplication) -> str:
    if replication.strategy == "SimpleStrategy":
        return (
            f"{{'class': 'SimpleStrategy', 'replication_factor': {replication.replication_factor}}}"
        )
    dcs = ", ".join(f"'{dc}': {factor}" for dc, factor in sorted(replication.data_centers.items()))
    return f"{{'class': 'NetworkTopologyStrategy', {dcs}}}"


def _create_tables(ddl: _Ddl) -> bool:
    """Create the missing Scala tables; True if all of them were missing (a fresh schema)."""
    existing = ddl.tables()
    missing = [(name, d) for name, d in scala_tables(ddl.names) if name not in existing]
    if not missing:
        return False
    if not ddl.options.create_tables:
        if ddl.names.setting in existing:
            return False  # the steps (or the final check) decide whether the rest is acceptable
        raise SchemaError(
            f"table {ddl.keyspace}.{ddl.names.setting} does not exist and may not be created"
        )
    log.info("schema: creating %s in %s", ", ".join(name for name, _ in missing), ddl.keyspace)
    for name, definition in missing:
        ddl.create_table(name, definition)
    return len(missing) == len(scala_tables(ddl.names))


def _run_steps(ddl: _Ddl, key: str, steps: Sequence[_Step], *, fresh: bool) -> int:
    latest = len(steps) - 1
    recorded = ddl.recorded_version(key)
    if recorded is None and fresh:
        log.info("schema: fresh tables, recording %s = %d", key, latest)
        ddl.record_version(key, latest)
        return latest
    current = -1 if recorded is None else recorded
    if current > latest:
        log.warning(
            "schema: %s is %d, newer than the %d this kjournal knows; running no %s steps",
            key,
            current,
            latest,
            key,
        )
        return current
    for version in range(current + 1, latest + 1):
        step = steps[version]
        log.info("schema: %s step %d: %s", key, version, step.description)
        try:
            step.apply(ddl)
        except SchemaError as exc:
            raise SchemaError(
                f"schema migration {key} step {version} ({step.description}) failed; "
                f"{key} stays {current}: {exc}"
            ) from exc
        ddl.record_version(key, version)
        current = version
    return current
