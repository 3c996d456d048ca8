"""Apply the journal's Cassandra schema through the core library's migrations."""

from __future__ import annotations

from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings


def apply_schema(host: str, port: int, keyspace: str) -> int:
    """Create or upgrade the keyspace; returns the schema version now recorded."""
    session = connect(CassandraSettings(contact_points=(host,), port=port))
    try:
        return migrate(session, CassandraSettings(keyspace=keyspace))
    finally:
        session.cluster.shutdown()
