"""The `conflicts` table (kjournal's own): duplicates whose content differed from the event kept.

Per journal (topic, id), ordered by the dropped record's (partition, offset) and seqNr: where the
dropped event was, and where the event the journal keeps is (kjournal.replicate.dropped explains
the duplicate rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC
from typing import Any
from typing import Final

from cassandra.query import PreparedStatement

from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import Prepare
from kjournal.cassandra.statements import cql
from kjournal.cassandra.tables import TableDef
from kjournal.cassandra.tables import cql_columns
from kjournal.model import PartitionOffset
from kjournal.model import seq_nr
from kjournal.model.conflict import Conflict

__all__ = [
    "COLUMNS",
    "CONFLICTS",
    "StoreStatements",
    "conflict_from_row",
    "insert_cql",
    "insert_values",
    "select_cql",
]

CONFLICTS = TableDef(
    columns=cql_columns(
        "topic text, id text, partition int, offset bigint, seq_nr bigint, kept_partition int,"
        " kept_offset bigint, detected_at timestamp"
    ),
    partition_key=("topic", "id"),
    clustering=("partition", "offset", "seq_nr"),
)

COLUMNS: Final = CONFLICTS.column_names


def insert_cql(tables: TableNames) -> str:
    return cql.insert(tables.qualified(tables.conflicts), COLUMNS)


def select_cql(tables: TableNames) -> str:
    """A journal's conflicts, oldest first; binds (topic, id, limit)."""
    return cql.select(tables.qualified(tables.conflicts), COLUMNS, "topic = ? AND id = ? LIMIT ?")


def insert_values(conflict: Conflict) -> tuple[Any, ...]:
    return (
        conflict.topic,
        conflict.id,
        conflict.dropped.partition,
        conflict.dropped.offset,
        conflict.seq_nr,
        conflict.kept.partition,
        conflict.kept.offset,
        conflict.detected_at,
    )


def conflict_from_row(row: tuple[Any, ...]) -> Conflict:
    topic, id_, partition, offset, seq, kept_partition, kept_offset, detected_at = row
    return Conflict(
        topic=topic,
        id=id_,
        seq_nr=seq_nr(seq),
        dropped=PartitionOffset(partition, offset),
        kept=PartitionOffset(kept_partition, kept_offset),
        detected_at=detected_at.replace(tzinfo=UTC),
    )


@dataclass(frozen=True, slots=True)
class StoreStatements:
    """The replicator's store's statement on `conflicts`."""

    insert: PreparedStatement

    @classmethod
    def prepare(cls, prepare: Prepare, tables: TableNames) -> StoreStatements:
        return cls(prepare(insert_cql(tables)))
