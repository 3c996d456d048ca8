"""Every metric kjournal records, declared once: name, kind, help, labels, unit.

Library code and the services record through the `Metrics` seam by a declaration's `name`; the
Prometheus adapter (kjournal_service/metrics_prometheus.py) creates each metric from its
declaration (help text, label names); docs/observability.md's metric table is generated from
`CATALOGUE` (`kjournal-dev metrics-docs --write`) and checked by a test.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

__all__ = ["CATALOGUE", "Kind", "Metric", "declared"]


class Kind(enum.Enum):
    COUNTER = "counter"
    HISTOGRAM = "histogram"
    GAUGE = "gauge"


@dataclass(frozen=True)
class Metric:
    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...] = ()
    unit: str = ""
    values: Mapping[str, str] = field(default_factory=dict)
    """Per label, the values it takes, for the docs (a label absent here takes open values)."""


def _counter(name: str, help: str, *labels: str, unit: str = "", **values: str) -> Metric:
    return Metric(name, Kind.COUNTER, help, labels, unit, values)


def _histogram(name: str, help: str, *labels: str, **values: str) -> Metric:
    return Metric(name, Kind.HISTOGRAM, help, labels, "s", values)


def _gauge(name: str, help: str, *labels: str, unit: str = "", **values: str) -> Metric:
    return Metric(name, Kind.GAUGE, help, labels, unit, values)


# --- every HTTP service (kjournal_service) ---
HTTP_REQUESTS = _counter(
    "kjournal_http_requests_total",
    "requests answered, by route template",
    *("service", "method", "route", "status"),
    unit="requests",
)
HTTP_REQUEST_SECONDS = _histogram(
    "kjournal_http_request_seconds",
    "from arrival to the last byte of the answer (a stream's end)",
    *("service", "method", "route"),
)
HTTP_REQUESTS_IN_FLIGHT = _gauge(
    "kjournal_http_requests_in_flight", "requests being served", "service", unit="requests"
)
DEPENDENCY_UP = _gauge(
    "kjournal_dependency_up",
    "1 while the background check of Kafka (and, for the reader, Cassandra) passes",
    *("service", "dependency"),
)

# --- the writer ---
WRITER_EVENTS = _counter(
    "kjournal_writer_events_total",
    "events appended (acknowledged by Kafka)",
    "topic",
    unit="events",
)

# --- reads (the reader, the in-process journal) ---
READ_PHASE_SECONDS = _histogram(
    "kjournal_read_phase_seconds",
    "each step before a read's first event; `tail` is a scan of Kafka (when the fold cannot answer)",
    "phase",
    phase="end_offset, pointer2, head, tail",
)
KAFKA_END_OFFSET_SECONDS = _histogram(
    "kjournal_kafka_end_offset_seconds", "the ListOffsets request of a read"
)
CONSUMER_ACQUIRE_SECONDS = _histogram(
    "kjournal_consumer_acquire_seconds", "waiting for (or creating) a pooled Kafka consumer"
)
CONSUMER_POOL_TIMEOUTS = _counter(
    "kjournal_consumer_pool_timeouts_total",
    "reads that found no free consumer in time (504)",
    unit="reads",
)
READER_STREAMS_IN_PROGRESS = _gauge(
    "kjournal_reader_streams_in_progress",
    "streamed reads (events, journal ids) being served by this process",
    unit="reads",
)
READER_STREAMS_REFUSED = _counter(
    "kjournal_reader_streams_refused_total",
    "streamed reads refused with 503 busy: `KJOURNAL_HTTP__MAX_CONCURRENT_STREAMS` were in "
    "progress",
    unit="reads",
)
KAFKA_SEEK_SECONDS = _histogram(
    "kjournal_kafka_seek_seconds", "seeking a consumer to a tail's first offset"
)
KAFKA_POLL_SECONDS = _histogram("kjournal_kafka_poll_seconds", "one poll of a tail scan")
KAFKA_TAIL_RECORDS_SCANNED = _counter(
    "kjournal_kafka_tail_records_scanned_total",
    "records a tail scan went through (other journals' included, skipped by key)",
    unit="records",
)
READ_PAYLOADS_DECODED = _counter(
    "kjournal_read_payloads_decoded_total",
    "tail appends whose payload a read decoded",
    "topic",
    unit="records",
)
FOLD_ANSWERS = _counter(
    "kjournal_fold_answers_total",
    "outcomes and journal views the reader's fold answered (fold), or that read Cassandra and "
    "scanned Kafka because it could not (scanned) — kafka-journal's head cache hits",
    *("topic", "question", "result"),
    unit="answers",
    question="outcome, view",
    result="fold, scanned",
)
FOLD_STARTS = _counter(
    "kjournal_fold_journal_starts_total",
    "journals the fold met and started from their Cassandra head",
    "topic",
    unit="journals",
)
FOLD_NEW_STARTS = _counter(
    "kjournal_fold_new_journal_starts_total",
    "journals the fold met and started empty, the topic's journal listing showing they had none",
    "topic",
    unit="journals",
)
FOLD_LISTINGS = _counter(
    "kjournal_fold_listings_total",
    "times a followed topic's journals were listed from Cassandra",
    "topic",
)
FOLD_FAILURES = _counter(
    "kjournal_fold_failures_total",
    "times a topic's fold failed and was rebuilt from pointer2",
    "topic",
)

# --- replication ---
REPLICATION_LAG = _gauge(
    "kjournal_replication_lag_records",
    "**the** replication lag, below",
    *("topic", "partition"),
    unit="records",
)
REPLICATOR_END_OFFSET = _gauge(
    "kjournal_replicator_end_offset",
    "each partition's end offset, as the lag monitor last saw it",
    *("topic", "partition"),
    unit="offset",
)
REPLICATOR_POINTER2_OFFSET = _gauge(
    "kjournal_replicator_pointer2_offset",
    "pointer2 after the last slice applied",
    *("topic", "partition"),
    unit="offset",
)
REPLICATOR_LATENCY = _histogram(
    "kjournal_replicator_latency_seconds",
    "append to visible in Cassandra: from a record's timestamp until the micro-batch applying "
    "it finished",
    "topic",
)
REPLICATOR_RECORD_AGE = _histogram(
    "kjournal_replicator_record_age_seconds",
    "age of a slice's newest record when the slice was applied",
    "topic",
)
REPLICATOR_MICRO_BATCHES = _counter(
    "kjournal_replicator_micro_batches_total",
    "micro-batches",
    "result",
    result="applied, empty, failed; gap_filled: offsets read again first",
)
REPLICATOR_MICRO_BATCH_SECONDS = _histogram(
    "kjournal_replicator_micro_batch_seconds", "one micro-batch, driver side, tasks included"
)
REPLICATOR_SLICE_SECONDS = _histogram(
    "kjournal_replicator_slice_seconds", "one partition's slice on an executor", "topic"
)
REPLICATOR_RECORDS = _counter(
    "kjournal_replicator_records_total",
    "records above pointer2 the replicator went through",
    "topic",
    unit="records",
)
REPLICATOR_IGNORED_RECORDS = _counter(
    "kjournal_replicator_ignored_records_total",
    "records that are not journal actions (no key, timestamp or header)",
    "topic",
    unit="records",
)
REPLICATOR_BATCHES = _counter(
    "kjournal_replicator_batches_total",
    "folded batches that changed the store",
    "topic",
    unit="batches",
)
REPLICATOR_EVENTS = _counter(
    "kjournal_replicator_events_total", "journal rows written", "topic", unit="events"
)
REPLICATOR_DROPPED_APPENDS = _counter(
    "kjournal_replicator_dropped_appends_total",
    "appends the append rule dropped (docs/concurrency.md)",
    *("topic", "kind"),
    unit="appends",
    kind="replay, refused, conflict, gap",
)
REPLICATOR_QUARANTINED_RECORDS = _counter(
    "kjournal_replicator_quarantined_records_total",
    "records quarantined: undecodable, or behind one in their journal",
    *("topic", "kind"),
    unit="records",
    kind="poison, parked",
)

# --- expiry (kjournal_replicator.expiry: the periodic purge of expired journals) ---
EXPIRY_JOURNALS_EXPIRED = _counter(
    "kjournal_expiry_journals_expired_total",
    "heads found whose expire_on date has come (before the checks that may skip them)",
    "topic",
    unit="journals",
)
EXPIRY_JOURNALS_PURGED = _counter(
    "kjournal_expiry_journals_purged_total",
    "purge actions produced for expired journals",
    "topic",
    unit="journals",
)
EXPIRY_JOURNALS_SKIPPED = _counter(
    "kjournal_expiry_journals_skipped_total",
    "expired journals left alone, by reason",
    *("topic", "reason"),
    unit="journals",
    reason="gone, not-expired, appended, purge-pending, unreadable, limit",
)
EXPIRY_PURGE_RACES = _counter(
    "kjournal_expiry_purge_races_total",
    "appends that reached Kafka between a run's last look at a journal and its purge (purged with "
    "it: alert on any)",
    "topic",
    unit="appends",
)
EXPIRY_RUN_SECONDS = _histogram(
    "kjournal_expiry_run_seconds", "one expiry run over one topic", "topic"
)

# --- the check (kjournal_replicator.check: Cassandra compared with the fold of Kafka) ---
CHECK_JOURNALS = _counter(
    "kjournal_check_journals_total",
    "journals the check looked at, by result",
    *("topic", "result"),
    unit="journals",
    result="same, differs, unchecked, repaired",
)
CHECK_EVENTS = _counter(
    "kjournal_check_events_total",
    "events of the fold of Kafka compared with Cassandra's rows",
    "topic",
    unit="events",
)
CHECK_RUN_SECONDS = _histogram("kjournal_check_run_seconds", "one check run", "topic")

CATALOGUE: Mapping[str, Metric] = {
    metric.name: metric for metric in globals().copy().values() if isinstance(metric, Metric)
}
"""Every declaration above, by name, in the order declared."""


def declared(name: str) -> Metric | None:
    """The declaration of `name`, if kjournal declares it."""
    return CATALOGUE.get(name)
