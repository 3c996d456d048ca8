"""The journal's table definitions (schema version 8 of the Scala library).

The column lists are the single source for CREATE TABLE, for the migrations' tolerant ALTERs and
for the post-migration check, so the three cannot drift apart. Types are spelled as
`system_schema.columns` reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "JOURNAL",
    "METAJOURNAL",
    "POINTER2",
    "QUARANTINE",
    "SETTING",
    "TableDef",
]


@dataclass(frozen=True, slots=True)
class TableDef:
    """A table's shape: columns in declaration order, partition key, clustering columns, indexes.

    `indexes` are the indexed columns; an index is named `<table>_<column>_idx` as in Scala.
    """

    columns: tuple[tuple[str, str], ...]
    partition_key: tuple[str, ...]
    clustering: tuple[str, ...] = ()
    indexes: tuple[str, ...] = ()

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


def index_name(table: str, column: str) -> str:
    return f"{table}_{column}_idx"


JOURNAL = TableDef(
    columns=(
        ("id", "text"),
        ("topic", "text"),
        ("segment", "bigint"),
        ("seq_nr", "bigint"),
        ("partition", "int"),
        ("offset", "bigint"),
        ("timestamp", "timestamp"),
        ("origin", "text"),
        ("version", "text"),
        ("meta_record_id", "uuid"),
        ("tags", "set<text>"),
        ("metadata", "text"),
        ("payload_type", "text"),
        ("payload_txt", "text"),
        ("payload_bin", "blob"),
        ("headers", "map<text, text>"),
    ),
    partition_key=("id", "topic", "segment"),
    clustering=("seq_nr", "timestamp"),
)

METAJOURNAL = TableDef(
    columns=(
        ("id", "text"),
        ("topic", "text"),
        ("segment", "bigint"),
        ("partition", "int"),
        ("offset", "bigint"),
        ("segment_size", "int"),
        ("seq_nr", "bigint"),
        ("delete_to", "bigint"),
        ("created", "timestamp"),
        ("created_date", "date"),
        ("updated", "timestamp"),
        ("expire_after", "duration"),
        ("expire_on", "date"),
        ("record_id", "uuid"),
        ("origin", "text"),
        ("properties", "map<text, text>"),
        ("metadata", "text"),
    ),
    partition_key=("topic", "segment"),
    clustering=("id",),
    indexes=("created_date", "expire_on"),
)

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

SETTING = TableDef(
    columns=(
        ("key", "text"),
        ("value", "text"),
        ("timestamp", "timestamp"),
        ("origin", "text"),
        ("metadata", "text"),
    ),
    partition_key=("key",),
)

# Our extension: Kafka records the replicator could not decode, kept per journal for an operator.
QUARANTINE = TableDef(
    columns=(
        ("topic", "text"),
        ("id", "text"),
        ("partition", "int"),
        ("offset", "bigint"),
        ("reason", "text"),
        ("header", "blob"),
        ("value", "blob"),
        ("record_timestamp", "timestamp"),
        ("quarantined_at", "timestamp"),
    ),
    partition_key=("topic", "id"),
    clustering=("partition", "offset"),
)
