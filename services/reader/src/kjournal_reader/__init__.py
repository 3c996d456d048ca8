"""kjournal reader service: journal reads over HTTP (Kafka read, Cassandra read)."""
