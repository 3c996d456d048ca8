"""Executor side: apply the Kafka records of one Spark partition with `replicate_partition`.

Runs inside PySpark's Python workers, with the worker process's store (`worker_store.py`).

What comes back to the driver is one `SliceReport` per Kafka partition: the core's
`ReplicationResult`, the metrics the core recorded while applying, and the replication latency of
each record it applied. The driver turns them into metrics and the per-micro-batch log line.

With tracing on (the worker sets up the SDK from the `OTEL_*` variables it inherits), each Kafka
partition's slice is a CONSUMER span `process <topic>`, a child of the driver's micro-batch span
(whose W3C context travels with the task), linked to the produce spans of its first
`trace_links` traced records; the Cassandra spans of applying it are its children, and its
quarantined records are events on it. The worker's batch span processor sends them in the
background (`OTEL_BSP_SCHEDULE_DELAY`) while the worker waits for its next task, and at its exit:
flushing at the end of each task cost a request to the collector per task, a sixth of a short
micro-batch.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import tzinfo
from typing import Any

from kjournal.cassandra.settings import CassandraSettings
from kjournal.errors import CassandraUnavailable
from kjournal.errors import DeadlineExceeded
from kjournal.errors import MicroBatchError
from kjournal.errors import SliceTimeout
from kjournal.metrics import RecordingMetrics
from kjournal.ports import ReplicatedStore
from kjournal.replicate import ReplicationResult
from kjournal.replicate import replicate_partition
from kjournal.spans import conventions as sem
from kjournal.wire.record import ConsumedRecord

from kjournal_replicator import zip_imports
from kjournal_replicator.metrics import MetricsSnapshot
from kjournal_replicator.settings import ApplySettings
from kjournal_replicator.slice_span import slice_span
from kjournal_replicator.slice_span import worker_tracing
from kjournal_replicator.worker_store import WORKER_STORE

__all__ = [
    "COLUMNS",
    "ApplyTask",
    "SliceReport",
    "apply_records",
    "apply_rows",
    "to_record",
]

log = logging.getLogger(__name__)

COLUMNS = (
    "topic",
    "partition",
    "offset",
    "key",
    "value",
    "headers",
    "unix_millis(timestamp) AS timestamp_ms",
)
"""What the executors read from the Kafka source, in this order (rows are indexed by position)."""

_TRANSIENT = (CassandraUnavailable, DeadlineExceeded)


@dataclass(frozen=True, slots=True)
class SliceReport:
    """One Kafka partition's share of a micro-batch, as applied by one task."""

    result: ReplicationResult
    first_offset: int
    last_offset: int
    seconds: float
    attempts: int
    latencies: tuple[float, ...]  # applied at − record timestamp, per applied record
    metrics: MetricsSnapshot


@dataclass(frozen=True)
class ApplyTask:
    """Everything a task needs; pickled by Spark into each task's closure."""

    cassandra: CassandraSettings
    apply: ApplySettings
    # Set per micro-batch: each Kafka partition's first offset not yet in Cassandra (see
    # `check_nothing_skipped`), and the micro-batch span's W3C traceparent.
    first_needed: Mapping[tuple[str, int], int] = field(default_factory=dict)
    trace_parent: str | None = None

    def __call__(self, rows: Iterable[Sequence[Any]]) -> Iterator[SliceReport]:
        return apply_rows(
            rows,
            self.cassandra,
            self.apply,
            first_needed=self.first_needed,
            trace_parent=self.trace_parent,
        )


def to_record(row: Sequence[Any]) -> ConsumedRecord:
    """A ConsumedRecord from a row of COLUMNS (Spark hands binary columns over as bytearray)."""
    topic, partition, offset, key, value, headers, timestamp_ms = row
    return ConsumedRecord(
        topic=topic,
        partition=partition,
        offset=offset,
        key=None if key is None else bytes(key),
        value=None if value is None else bytes(value),
        headers=[(name, b"" if data is None else bytes(data)) for name, data in headers or ()],
        timestamp_ms=timestamp_ms,
    )


def apply_rows(
    rows: Iterable[Sequence[Any]],
    cassandra: CassandraSettings,
    settings: ApplySettings,
    *,
    first_needed: Mapping[tuple[str, int], int] | None = None,
    trace_parent: str | None = None,
) -> Iterator[SliceReport]:
    """Apply the rows of one Spark partition with this worker's Cassandra store."""
    zip_imports.install()  # for the worker's next tasks
    worker_tracing()
    records = [to_record(row) for row in rows]
    if records:
        yield from apply_records(
            records,
            WORKER_STORE.get(cassandra, settings),
            settings,
            first_needed=first_needed,
            trace_parent=trace_parent,
            expiry_zone=cassandra.expiry_zone,
        )


def check_nothing_skipped(
    topic: str, partition: int, first_offset: int, first_needed: Mapping[tuple[str, int], int]
) -> None:
    """Refuse a slice that starts past the partition's first offset not yet in Cassandra.

    The Kafka source runs with failOnDataLoss=false (so that a deleted topic does not stop the
    query) and then silently starts a partition at its earliest offset when retention deleted
    the planned start. The driver's gap check only sees the planned ranges; this check sees what
    the source really returned, before anything of the slice is written.
    """
    needed = first_needed.get((topic, partition))
    if needed is not None and first_offset > needed:
        raise MicroBatchError(
            f"{topic}:{partition}: offsets {needed}..{first_offset - 1} are no longer in Kafka "
            "(deleted by retention before they were replicated); refusing to skip them (set "
            "KJOURNAL_APPLY__FAIL_ON_GAP=false to accept the loss)"
        )


def apply_records(
    records: Iterable[ConsumedRecord],
    store: ReplicatedStore,
    settings: ApplySettings,
    *,
    first_needed: Mapping[tuple[str, int], int] | None = None,
    trace_parent: str | None = None,
    expiry_zone: tzinfo = UTC,
) -> Iterator[SliceReport]:
    """Apply every Kafka partition found in `records`, each whole and in offset order.

    `expiry_zone`: the time zone of the expiry dates written (CassandraSettings.expiry_zone).

    The Kafka source gives one Spark partition per Kafka partition, in offset order (the driver
    checks the plan, see ranges.py); grouping and sorting here cost little and keep a different
    planner from ever interleaving two partitions' records.
    """
    slices: dict[tuple[str, int], list[ConsumedRecord]] = {}
    for record in records:
        slices.setdefault((record.topic, record.partition), []).append(record)
    for part in slices.values():
        if any(a.offset >= b.offset for a, b in itertools.pairwise(part)):
            part.sort(key=lambda record: record.offset)
    ordered = sorted(slices.items())
    for (topic, partition), part in ordered:
        check_nothing_skipped(topic, partition, part[0].offset, first_needed or {})

    def apply(item: tuple[tuple[str, int], list[ConsumedRecord]]) -> SliceReport:
        (topic, partition), part = item
        with slice_span(topic, partition, part, trace_parent, settings.trace_links) as span:
            report = _apply_slice(store, topic, partition, part, settings, expiry_zone)
            if span is not None:
                result = report.result
                span.set_attribute(sem.EVENTS, result.events)
                span.set_attribute(sem.JOURNALS, result.journals)
                span.set_attribute(sem.QUARANTINED, result.quarantined)
                span.set_attribute(sem.ATTEMPTS, report.attempts)
            return report

    if not ordered:
        return
    # Partitions are independent: overlap their Cassandra round trips (the store is thread-safe).
    # Waiting with a deadline: a wedged driver call (seen when a connection died during a
    # blocking prepare) must fail the task, not stall replication without a word. On a failure
    # the other slices are abandoned; the task fails and Spark replays them, which is safe.
    pool = ThreadPoolExecutor(len(ordered), thread_name_prefix="kjournal-slice")
    try:
        futures = [pool.submit(apply, item) for item in ordered]
        deadline = time.monotonic() + settings.slice_timeout_s
        reports = []
        for ((topic, partition), _), future in zip(ordered, futures, strict=True):
            try:
                reports.append(future.result(timeout=max(deadline - time.monotonic(), 0.0)))
            except FutureTimeout:
                WORKER_STORE.forget()  # its session may be the wedged part
                raise SliceTimeout(
                    f"applying {topic}:{partition} took more than {settings.slice_timeout_s} s"
                ) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    yield from reports


def _apply_slice(
    store: ReplicatedStore,
    topic: str,
    partition: int,
    records: list[ConsumedRecord],
    settings: ApplySettings,
    expiry_zone: tzinfo,
) -> SliceReport:
    started = time.perf_counter()
    attempt = 0
    while True:
        attempt += 1
        metrics = RecordingMetrics()
        try:
            result = replicate_partition(
                topic,
                partition,
                records,
                store,
                datetime.now(UTC),
                metrics=metrics,
                expiry_zone=expiry_zone,
            )
            break
        except _TRANSIENT as exc:
            # Re-applying a slice is safe (pointer2 and the heads skip what is in); a retry here
            # is cheaper than failing the micro-batch for a Cassandra hiccup.
            if attempt > settings.retries:
                raise
            log.warning(
                "applying %s:%d offsets %d..%d failed (attempt %d of %d), retrying: %s",
                topic,
                partition,
                records[0].offset,
                records[-1].offset,
                attempt,
                settings.retries + 1,
                exc,
            )
            time.sleep(settings.retry_backoff_s * attempt)
    applied_at = time.time()
    before = -1 if result.pointer2_before is None else result.pointer2_before
    latencies = tuple(
        max(applied_at - record.timestamp_ms / 1000, 0.0)
        for record in records
        if record.offset > before and record.timestamp_ms is not None and record.timestamp_ms >= 0
    )
    return SliceReport(
        result=result,
        first_offset=records[0].offset,
        last_offset=records[-1].offset,
        seconds=time.perf_counter() - started,
        attempts=attempt,
        latencies=latencies,
        metrics=MetricsSnapshot.of(metrics),
    )
