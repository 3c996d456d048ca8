"""Driver side of one micro-batch (foreachBatch): check the plan, apply on the executors, report.

1. read the planned Kafka ranges (ranges.py) and refuse a split partition; unless disabled,
   find each range that starts past pointer2 + 1 (offsets.py: the checkpoint is ahead of
   Cassandra) and first apply the offsets in between, read from Kafka again (`read_ranges`);
2. `mapPartitions` with `ApplyTask`: each task applies its Kafka partitions' records with
   `replicate_partition`, each partition whole and in offset order, and returns a `SliceReport`
   per partition; `collect()` waits for all. The Kafka source plans one Spark partition per Kafka
   partition; when there are more than `max_tasks` they are coalesced (no shuffle: a coalesced
   partition reads its parents one after the other), because a PySpark task costs a few hundred
   milliseconds of overhead however few records it holds;
3. check that every non-empty range came back, replay the executors' metrics, log one line.

With tracing on, the micro-batch is a span (`micro-batch`) whose context goes with the tasks:
their slice spans are its children (slice_span.py).

A topic deleted while its partitions are read fails that read (after the Kafka source's
timeouts); the micro-batch then applies the other topics' ranges again and drops the deleted
one's, so the query goes on. Any other failure raises out of foreachBatch: Spark then fails the
query without committing the batch, the job exits non-zero, and the restart replays the batch
from the checkpoint (re-applying is a no-op for what was already written). A task failure is retried by Spark first
(`spark.task.maxFailures`, 4 on a cluster) and inside the task for Cassandra errors.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace

from kjournal.errors import MicroBatchError
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import REPLICATOR_LATENCY
from kjournal.metrics.catalogue import REPLICATOR_MICRO_BATCH_SECONDS
from kjournal.metrics.catalogue import REPLICATOR_MICRO_BATCHES
from kjournal.spans import conventions as sem
from kjournal.spans import span
from pyspark.sql import DataFrame

from kjournal_replicator.apply import COLUMNS
from kjournal_replicator.apply import ApplyTask
from kjournal_replicator.apply import SliceReport
from kjournal_replicator.offsets import Pointer2
from kjournal_replicator.offsets import describe_gap
from kjournal_replicator.offsets import find_gaps
from kjournal_replicator.ranges import OffsetRange
from kjournal_replicator.ranges import micro_batch_ranges
from kjournal_replicator.slice_span import task_parent
from kjournal_replicator.topic_watch import TopicWatch

__all__ = ["MicroBatchHandler", "MicroBatchStatus", "MicroBatchSummary"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MicroBatchSummary:
    batch_id: int
    partitions: int
    records: int
    events: int
    journals: int
    quarantined: int
    parked: int
    ignored: int
    pointer2_moves: int
    seconds: float
    slowest_slice_s: float  # the longest replicate_partition call, retries included

    @classmethod
    def of(cls, batch_id: int, reports: Sequence[SliceReport], seconds: float) -> MicroBatchSummary:
        results = [report.result for report in reports]
        return cls(
            batch_id=batch_id,
            partitions=len(results),
            records=sum(r.records for r in results),
            events=sum(r.events for r in results),
            journals=sum(r.journals for r in results),
            quarantined=sum(r.quarantined for r in results),
            parked=sum(r.parked for r in results),
            ignored=sum(r.ignored for r in results),
            pointer2_moves=sum(1 for r in results if r.pointer2 != r.pointer2_before),
            seconds=seconds,
            slowest_slice_s=max((report.seconds for report in reports), default=0.0),
        )


@dataclass
class MicroBatchStatus:
    """What the health endpoint and the shutdown need to know about micro-batches."""

    idle: threading.Event = field(default_factory=threading.Event)
    last_batch_id: int | None = None
    last_finished: float | None = None  # time.time()
    last_summary: MicroBatchSummary | None = None
    failures: int = 0

    def __post_init__(self) -> None:
        self.idle.set()


class MicroBatchHandler:
    """The foreachBatch function; one per query."""

    def __init__(
        self,
        task: ApplyTask,
        pointer2: Pointer2,
        metrics: Metrics,
        status: MicroBatchStatus | None = None,
        *,
        max_tasks: int,
        topics_now: Callable[[], Collection[str]] | None = None,
        watch: TopicWatch | None = None,
        read_ranges: Callable[[Sequence[OffsetRange]], DataFrame] | None = None,
    ) -> None:
        self._task = task
        # A batch read of exact Kafka offset ranges (spark.read_ranges), to fill a gap with.
        self._read_ranges = read_ranges
        # The matching topics Kafka has now: asked only when a planned partition brought no
        # records back (its topic may have been deleted meanwhile).
        self._topics_now = topics_now
        self._watch = watch or TopicWatch()
        self._max_tasks = max_tasks
        self._read_pointer2 = pointer2
        # pointer2 as this job left it (it is the only writer): the gap check then costs no
        # Cassandra round trip. Only a suspected gap is confirmed against Cassandra.
        self._known: dict[tuple[str, int], int] = {}
        self._metrics = metrics
        self.status = status or MicroBatchStatus()

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        self.status.idle.clear()
        try:
            with span(sem.SPAN_MICRO_BATCH, attributes={sem.MICRO_BATCH_ID: batch_id}) as traced:
                summary = self._run(batch, batch_id, started)
                if traced is not None:
                    traced.set_attributes(
                        {
                            sem.PARTITIONS: summary.partitions,
                            sem.RECORDS: summary.records,
                            sem.EVENTS: summary.events,
                            sem.QUARANTINED: summary.quarantined,
                        }
                    )
        except Exception:
            self.status.failures += 1
            self._metrics.increment(REPLICATOR_MICRO_BATCHES.name, result="failed")
            log.exception("micro-batch %d failed", batch_id)
            raise
        finally:
            self.status.idle.set()
        self.status.last_batch_id = batch_id
        self.status.last_finished = time.time()
        self.status.last_summary = summary

    def _run(self, batch: DataFrame, batch_id: int, started: float) -> MicroBatchSummary:
        ranges = [r for _, r in micro_batch_ranges(batch) if r.size > 0]
        if not ranges:
            self._metrics.increment(REPLICATOR_MICRO_BATCHES.name, result="empty")
            return MicroBatchSummary.of(batch_id, [], time.perf_counter() - started)
        if self._task.apply.fail_on_gap:
            self._fill_gaps(batch_id, ranges)

        checked = time.perf_counter()
        reports = self._apply_without_vanished(batch, batch_id, ranges)
        seconds = time.perf_counter() - started
        self._metrics.increment(REPLICATOR_MICRO_BATCHES.name, result="applied")
        self._metrics.observe(REPLICATOR_MICRO_BATCH_SECONDS.name, seconds)
        summary = MicroBatchSummary.of(batch_id, reports, seconds)
        log.info(
            "micro-batch %d: %d partitions, %d records, %d events, %d journals, "
            "%d quarantined, %d parked, %d ignored, %d pointer2 moves in %.3f s "
            "(checks %.3f s, slowest slice %.3f s)",
            batch_id,
            summary.partitions,
            summary.records,
            summary.events,
            summary.journals,
            summary.quarantined,
            summary.parked,
            summary.ignored,
            summary.pointer2_moves,
            seconds,
            checked - started,
            summary.slowest_slice_s,
        )
        return summary

    def _apply(self, frame: DataFrame, ranges: Sequence[OffsetRange]) -> list[SliceReport]:
        """Apply `frame`'s records on the executors; every range reported, metrics replayed."""
        rdd = frame.selectExpr(*COLUMNS).rdd
        if rdd.getNumPartitions() > self._max_tasks:
            rdd = rdd.coalesce(self._max_tasks)
        task = replace(self._task, trace_parent=task_parent())
        if task.apply.fail_on_gap:
            task = replace(task, first_needed=self._first_needed(ranges))
        reports: list[SliceReport] = rdd.mapPartitions(task).collect()
        self.check_complete(ranges, reports)
        for report in reports:
            if report.result.pointer2 is not None:
                self._known[(report.result.topic, report.result.partition)] = report.result.pointer2
            report.metrics.replay(self._metrics)
            topic = report.result.topic
            for latency in report.latencies:
                self._metrics.observe(REPLICATOR_LATENCY.name, latency, topic=topic)
        return reports

    def _apply_without_vanished(
        self, batch: DataFrame, batch_id: int, ranges: Sequence[OffsetRange]
    ) -> list[SliceReport]:
        """`_apply`, and when it failed because a planned topic was deleted under its read (the
        read of a deleted partition waits out the source's timeouts, kafka_source.py, and fails
        the task), the other topics' ranges again, read from Kafka as planned: the query goes
        on without a restart."""
        try:
            return self._apply(batch, ranges)
        except Exception:
            vanished = self._vanished({offsets.topic for offsets in ranges})
            if not vanished or self._read_ranges is None:
                raise
        for topic in sorted(vanished):
            self._watch.deleted(topic)
        surviving = [offsets for offsets in ranges if offsets.topic not in vanished]
        log.warning(
            "micro-batch %d: its read failed on %d partition(s) of a topic gone since it was "
            "planned; applying the other %d partition(s) again",
            batch_id,
            len(ranges) - len(surviving),
            len(surviving),
        )
        if not surviving:
            return []
        self._known.clear()  # the failed read may have applied part of them: confirm pointer2
        return self._apply(self._read_ranges(surviving), surviving)

    def _vanished(self, topics: set[str]) -> set[str]:
        """Which of `topics` Kafka no longer has (none when it cannot tell)."""
        if self._topics_now is None:
            return set()
        try:
            existing = set(self._topics_now())
        except Exception:
            log.debug("could not list the matching topics", exc_info=True)
            return set()
        return topics - existing

    def _fill_gaps(self, batch_id: int, ranges: Sequence[OffsetRange]) -> None:
        """Apply the offsets between pointer2 and where the micro-batch starts, if any.

        Spark's checkpoint and pointer2 part ways when Cassandra lost its last writes (a node
        killed before its commit log reached the disk, a restore from backup) or when a
        checkpoint meets another keyspace. The offsets in between are read from Kafka again and
        applied before the micro-batch: pointer2, not the checkpoint, says what Cassandra holds.
        Offsets that Kafka no longer holds fail the micro-batch: they are lost."""
        gaps = find_gaps(ranges, self._pointer2)
        if gaps:
            self._known.clear()  # confirm against Cassandra
            gaps = find_gaps(ranges, self._pointer2)
        if not gaps:
            return
        described = "; ".join(describe_gap(gap) for gap in gaps)
        if self._read_ranges is None:
            raise MicroBatchError(
                f"refusing to skip unreplicated offsets: {described} (delete the checkpoint to "
                "resume from pointer2, or set KJOURNAL_APPLY__FAIL_ON_GAP=false to accept the "
                "loss)"
            )
        log.warning(
            "micro-batch %d: Cassandra lacks offsets the checkpoint has passed, reading them from "
            "Kafka again first: %s",
            batch_id,
            described,
        )
        try:
            self._apply(self._read_ranges(gaps), gaps)
        except MicroBatchError:
            raise
        except Exception as exc:
            # Kafka or Cassandra unavailable mid-way: the micro-batch fails and is tried again.
            raise MicroBatchError(
                f"applying unreplicated offsets read from Kafka again failed: {described}: {exc}"
            ) from exc
        self._metrics.increment(REPLICATOR_MICRO_BATCHES.name, result="gap_filled")
        left = find_gaps(ranges, self._pointer2)
        if left:
            raise MicroBatchError(
                "offsets read from Kafka again did not all reach Cassandra: "
                + "; ".join(describe_gap(gap) for gap in left)
            )

    def _pointer2(self, topic: str, partition: int) -> int | None:
        known = self._known.get((topic, partition))
        if known is not None:
            return known
        read = self._read_pointer2(topic, partition)
        if read is not None:
            self._known[(topic, partition)] = read
        return read

    def _first_needed(self, ranges: Sequence[OffsetRange]) -> dict[tuple[str, int], int]:
        """Per planned partition, the first offset Cassandra does not hold yet."""
        needed = {}
        for offsets in ranges:
            last = self._pointer2(offsets.topic, offsets.partition)
            next_offset = 0 if last is None else last + 1
            needed[(offsets.topic, offsets.partition)] = max(offsets.from_offset, next_offset)
        return needed

    def check_complete(self, ranges: Sequence[OffsetRange], reports: Sequence[SliceReport]) -> None:
        """Every planned range reported, within its bounds, and nothing else."""
        by_partition = {(r.result.topic, r.result.partition): r for r in reports}
        if len(by_partition) != len(reports):
            raise MicroBatchError("a Kafka partition was applied by more than one task")
        planned = {(r.topic, r.partition): r for r in ranges}
        for key, report in by_partition.items():
            offsets = planned.get(key)
            if offsets is None or not (
                offsets.from_offset <= report.first_offset <= report.last_offset
                and report.last_offset < offsets.until_offset
            ):
                raise MicroBatchError(
                    f"{key[0]}:{key[1]} applied offsets {report.first_offset}.."
                    f"{report.last_offset}, outside the planned {offsets}"
                )
        if self._task.apply.fail_on_gap:
            missing = planned.keys() - by_partition
            if missing and self._topics_now is not None:
                existing = set(self._topics_now())
                gone = {(topic, p) for topic, p in missing if topic not in existing}
                for topic in sorted({topic for topic, _ in gone}):
                    self._watch.deleted(topic)
                missing -= gone
            if missing:
                names = sorted(f"{topic}:{partition}" for topic, partition in missing)
                raise MicroBatchError(f"no records came back for planned partitions {names}")
