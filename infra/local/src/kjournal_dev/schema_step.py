"""Apply the journal's Cassandra schema through the core library's migrations."""

from __future__ import annotations

from kjournal.cassandra.schema import SchemaSettings, migrate


def apply_schema(host: str, port: int, keyspace: str) -> int:
    """Create or upgrade the keyspace; returns the schema version now recorded."""
    from cassandra.cluster import Cluster

    cluster = Cluster([host], port=port, protocol_version=5, connect_timeout=10)
    try:
        session = cluster.connect()
        return migrate(session, SchemaSettings(keyspace=keyspace))
    finally:
        cluster.shutdown()
