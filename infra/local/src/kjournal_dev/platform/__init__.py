"""The loopback platform: real Kafka, Cassandra and an OpenTelemetry Collector, then kjournal's
writer, reader and replicator, all on 127.0.0.1.

    lifecycle.py       Platform: up (in named steps), supervise, status, down
    kafka_node.py      the KRaft broker
    cassandra_node.py  the Cassandra node
    collector.py       the collector process (built by kjournal_dev.artifacts.collector)
    services.py        the writer, reader and replicator processes
    topics.py          topic creation and deletion
    schema.py          the Cassandra schema step of the plain platform
    state.py           what `up` started, kept in a JSON file
    replay.py          replication without Spark, for tests and benchmarks
    cli.py             up | status | down | logs
"""
