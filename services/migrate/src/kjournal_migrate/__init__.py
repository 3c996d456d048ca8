"""kjournal's schema job: the only component with Cassandra DDL rights. It creates or upgrades the
journal keyspace (`kjournal.cassandra.schema.migrate`) and exits; run it before the replicator
and the reader start (a Helm pre-install/pre-upgrade hook Job)."""
