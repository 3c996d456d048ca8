"""kjournal: an event-sourcing journal on Kafka with a Cassandra eventual store."""
