"""kjournal writer service: appends, deletes, purges and marks over HTTP (Kafka rights only)."""
