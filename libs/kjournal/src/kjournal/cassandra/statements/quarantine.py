"""The `quarantine` table (kjournal's own): Kafka records the replicator did not apply.

Per journal (topic, id), ordered by (partition, offset): the record that could not be decoded,
and the journal's later records parked behind it (kjournal.replicate.quarantine explains the
policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final

from cassandra.query import PreparedStatement

from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import Prepare
from kjournal.cassandra.statements import cql
from kjournal.cassandra.statements.journal import unset_if_none
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns
from kjournal.model.quarantine import QuarantinedRecord

__all__ = [
    "COLUMNS",
    "QUARANTINE",
    "StoreStatements",
    "first_in_partition_cql",
    "first_of_journal_cql",
    "insert_cql",
    "insert_values",
    "journals_cql",
    "quarantined_record_from_row",
    "select_cql",
]

QUARANTINE = TableDef(
    columns=cql_columns(
        "topic text, id text, partition int, offset bigint, reason text, header blob, value blob,"
        " record_timestamp timestamp, quarantined_at timestamp"
    ),
    partition_key=("topic", "id"),
    clustering=("partition", "offset"),
)

COLUMNS: Final = QUARANTINE.column_names

# A record without a key is kept under the empty id (the table's key cannot be null).
_NO_ID: Final = ""


def insert_cql(tables: TableNames) -> str:
    return cql.insert(tables.qualified(tables.quarantine), COLUMNS)


def select_cql(tables: TableNames) -> str:
    """The oldest quarantined record of one journal; binds (topic, id)."""
    return cql.select(tables.qualified(tables.quarantine), COLUMNS, "topic = ? AND id = ? LIMIT 1")


def insert_values(record: QuarantinedRecord) -> tuple[Any, ...]:
    return (
        record.topic,
        _NO_ID if record.id is None else record.id,
        record.partition,
        record.offset,
        record.reason,
        unset_if_none(record.header),
        unset_if_none(record.value),
        unset_if_none(record.timestamp),
        record.quarantined_at,
    )


def quarantined_record_from_row(row: tuple[Any, ...]) -> QuarantinedRecord:
    topic, id_, partition, offset, reason, header, value, timestamp, quarantined_at = row
    return QuarantinedRecord(
        topic=topic,
        partition=partition,
        offset=offset,
        id=id_ or None,
        reason=reason or "",
        header=header,
        value=value,
        timestamp=_utc(timestamp),
        quarantined_at=_utc(quarantined_at) or datetime.fromtimestamp(0, UTC),
    )


def _utc(value: datetime | None) -> datetime | None:
    """The driver returns naive UTC datetimes."""
    return None if value is None else value.replace(tzinfo=UTC)


def journals_cql(tables: TableNames) -> str:
    """Every quarantined journal, as (topic, id): a scan, over a normally tiny table."""
    return cql.select(tables.qualified(tables.quarantine), "DISTINCT topic, id")


def first_of_journal_cql(tables: TableNames) -> str:
    """(partition, offset) of a journal's first quarantined record; binds (topic, id)."""
    columns = ("partition", "offset")
    return cql.select(tables.qualified(tables.quarantine), columns, "topic = ? AND id = ? LIMIT 1")


def first_in_partition_cql(tables: TableNames) -> str:
    """The first quarantined offset of a journal in one partition; binds (topic, id, partition)."""
    where = "topic = ? AND id = ? AND partition = ? LIMIT 1"
    return cql.select(tables.qualified(tables.quarantine), "offset", where)


@dataclass(frozen=True, slots=True)
class StoreStatements:
    """The replicator's store's statements on `quarantine`."""

    insert: PreparedStatement
    journals: PreparedStatement
    first_of_journal: PreparedStatement
    first_in_partition: PreparedStatement

    @classmethod
    def prepare(cls, prepare: Prepare, tables: TableNames) -> StoreStatements:
        return cls(
            prepare(insert_cql(tables)),
            prepare(journals_cql(tables)),
            prepare(first_of_journal_cql(tables)),
            prepare(first_in_partition_cql(tables)),
        )
