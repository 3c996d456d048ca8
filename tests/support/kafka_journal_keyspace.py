"""A keyspace as kafka-journal creates it, from its own CQL (tests/fixtures/cassandra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCHEMA_CQL = Path(__file__).parents[1] / "fixtures" / "cassandra" / "kafka-journal-schema.cql"

# What kafka-journal's CQL leaves in the keyspace.
KAFKA_JOURNAL_TABLES = frozenset({"journal", "metajournal", "pointer2", "setting", "locks"})


def kafka_journal_statements(keyspace: str) -> list[str]:
    """The statements of kafka-journal-schema.cql for `keyspace`, in order."""
    lines = [
        line for line in SCHEMA_CQL.read_text().splitlines() if not line.lstrip().startswith("--")
    ]
    statements = [part.strip() for part in "\n".join(lines).split(";\n")]
    # `{keyspace}` only: the CQL has braces of its own (the replication map).
    return [part.rstrip(";").replace("{keyspace}", keyspace) for part in statements if part]


def create_kafka_journal_keyspace(session: Any, keyspace: str) -> None:
    """Run kafka-journal's schema creation for `keyspace` on a cassandra-driver session."""
    for statement in kafka_journal_statements(keyspace):
        session.execute(statement)


def tables_of(session: Any, keyspace: str) -> set[str]:
    rows = session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,)
    )
    return {row[0] for row in rows}
