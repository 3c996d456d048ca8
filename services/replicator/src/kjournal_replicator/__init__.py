"""kjournal replicator: copies journal actions from Kafka into Cassandra on Spark."""
