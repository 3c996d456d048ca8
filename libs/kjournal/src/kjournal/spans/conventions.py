"""The catalogue of span names and attribute keys: the OpenTelemetry semantic conventions (HTTP
server, messaging, database client spans), plus kjournal's own spans and keys under `kjournal.`.
Every span and attribute kjournal makes is named here, and only here
(tests/unit/tracing/test_span_catalogue.py fails on a literal elsewhere); docs/observability.md
lists every span with its attributes.

Never a payload, a header value or metadata in an attribute: keys, seqNrs, offsets, counts.
"""

from __future__ import annotations

from typing import Final

# --- messaging (Kafka) -----------------------------------------------------------------------
MESSAGING_SYSTEM: Final = "messaging.system"
MESSAGING_OPERATION_TYPE: Final = "messaging.operation.type"
MESSAGING_OPERATION_NAME: Final = "messaging.operation.name"
MESSAGING_DESTINATION: Final = "messaging.destination.name"
MESSAGING_PARTITION: Final = "messaging.destination.partition.id"
MESSAGING_KAFKA_OFFSET: Final = "messaging.kafka.offset"
MESSAGING_KAFKA_KEY: Final = "messaging.kafka.message.key"
MESSAGING_BODY_SIZE: Final = "messaging.message.body.size"
MESSAGING_BATCH_COUNT: Final = "messaging.batch.message_count"
KAFKA: Final = "kafka"

# --- database (Cassandra) --------------------------------------------------------------------
DB_SYSTEM: Final = "db.system.name"
DB_NAMESPACE: Final = "db.namespace"
DB_OPERATION: Final = "db.operation.name"
DB_COLLECTION: Final = "db.collection.name"
DB_QUERY_TEXT: Final = "db.query.text"
DB_BATCH_SIZE: Final = "db.operation.batch.size"
DB_RETURNED_ROWS: Final = "db.response.returned_rows"
CASSANDRA: Final = "cassandra"

# --- span names --------------------------------------------------------------------------------
# kjournal's own steps (INTERNAL spans)
SPAN_END_OFFSET: Final = "end offset"  # a partition's end offset (ListOffsets)
SPAN_POINTER2: Final = "pointer2"
SPAN_HEAD: Final = "head"  # a journal's Cassandra head (and quarantine flag)
SPAN_TAIL: Final = "tail"  # a journal's tail scanned from Kafka
SPAN_CONSUMER_ACQUIRE: Final = "consumer acquire"
SPAN_CONSUMER_SEEK: Final = "consumer seek"
SPAN_APPEND_OUTCOME: Final = "append outcome"  # one question of the writer's, on the reader
SPAN_MICRO_BATCH: Final = "micro-batch"


def send_span(topic: str) -> str:
    """A record's produce (PRODUCER)."""
    return f"send {topic}"


def poll_span(topic: str) -> str:
    """A poll of a tail scan (CONSUMER)."""
    return f"poll {topic}"


def process_span(topic: str) -> str:
    """A partition's slice applied by the replicator (CONSUMER)."""
    return f"process {topic}"


def cql_span(operation: str, table: str) -> str:
    """A Cassandra request (CLIENT): `SELECT journal`, `BATCH journal`."""
    return f"{operation} {table}"


def cli_span(command: str) -> str:
    """A `kjournal` command (CLIENT)."""
    return f"kjournal {command}"


# --- kjournal's own --------------------------------------------------------------------------
ACTION: Final = "kjournal.action"  # append, delete, purge, mark
SEQ_NR_FROM: Final = "kjournal.seq_nr.from"
SEQ_NR_TO: Final = "kjournal.seq_nr.to"
DELETE_TO: Final = "kjournal.delete_to"
EVENTS: Final = "kjournal.events"
JOURNAL_ID: Final = "kjournal.journal.id"
TOPIC: Final = "kjournal.topic"
PARTITION: Final = "kjournal.partition"
TAIL_ACTIONS: Final = "kjournal.tail.actions"
TAIL_OFFSETS: Final = "kjournal.tail.offsets"
RECORDS: Final = "kjournal.records"
JOURNALS: Final = "kjournal.journals"
PARTITIONS: Final = "kjournal.partitions"
QUARANTINED: Final = "kjournal.quarantined"
ATTEMPTS: Final = "kjournal.attempts"
OFFSET_FIRST: Final = "kjournal.offset.first"
OFFSET_LAST: Final = "kjournal.offset.last"
BEHIND_OFFSET: Final = "kjournal.behind_offset"  # the quarantined record parked records wait behind
CONSUMER_CREATED: Final = "kjournal.consumer.created"
MICRO_BATCH_ID: Final = "kjournal.micro_batch.id"
WAVE: Final = "kjournal.wave"  # a wave of the replicator's Cassandra writes
REQUESTS: Final = "kjournal.requests"  # Cassandra requests a span stands for
REQUESTS_FAILED: Final = "kjournal.requests.failed"
REASON: Final = "kjournal.reason"
LINKS_DROPPED: Final = "kjournal.links.dropped"
