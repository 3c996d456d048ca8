"""Cassandra side of the journal: schema, eventual reads, replicated writes."""
