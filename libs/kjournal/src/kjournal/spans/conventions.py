"""Span names and attribute keys: the OpenTelemetry semantic conventions (HTTP server, messaging,
database client spans), plus kjournal's own keys under `kjournal.`. docs/observability.md lists
every span with its attributes.

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

# --- kjournal's own --------------------------------------------------------------------------
ACTION: Final = "kjournal.action"  # append, delete, purge, mark
SEQ_NR_FROM: Final = "kjournal.seq_nr.from"
SEQ_NR_TO: Final = "kjournal.seq_nr.to"
DELETE_TO: Final = "kjournal.delete_to"
EVENTS: Final = "kjournal.events"
JOURNAL_ID: Final = "kjournal.journal.id"
TOPIC: Final = "kjournal.topic"
PARTITION: Final = "kjournal.partition"
TAIL_CACHE: Final = "kjournal.tail_cache"  # hit, miss, unknown
RECORDS: Final = "kjournal.records"
REASON: Final = "kjournal.reason"
LINKS_DROPPED: Final = "kjournal.links.dropped"
