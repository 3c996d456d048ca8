"""kjournal-dev: fetch and run real Kafka and Cassandra on loopback for development and tests."""
