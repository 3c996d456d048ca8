"""Apply the journal's Cassandra schema through the core library's migrations."""

from __future__ import annotations

from kjournal.cassandra.schema import SchemaSettings, migrate
from kjournal.cassandra.session import connect
from kjournal.settings import CassandraSettings


def apply_schema(host: str, port: int, keyspace: str) -> int:
    """Create or upgrade the keyspace; returns the schema version now recorded."""
    session = connect(CassandraSettings(contact_points=(host,), port=port))
    try:
        return migrate(session, SchemaSettings(keyspace=keyspace))
    finally:
        session.cluster.shutdown()
