"""One check run over its topics (see the package docstring for the phases)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path

from cassandra.cluster import Session
from kjournal.cassandra.session import connect
from kjournal.cassandra.snapshot import CassandraSnapshotReader
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.check.findings import JournalResult
from kjournal.check.findings import PartitionResult
from kjournal.check.report import TopicReport
from kjournal.errors import MicroBatchError
from kjournal.metrics.catalogue import CHECK_EVENTS
from kjournal.metrics.catalogue import CHECK_JOURNALS
from kjournal.metrics.catalogue import CHECK_RUN_SECONDS
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord
from kjournal_service.metrics_prometheus import PrometheusMetrics
from pyspark.sql import SparkSession

from kjournal_replicator.apply import COLUMNS
from kjournal_replicator.check.kafka import KafkaLog
from kjournal_replicator.check.recheck import Confirmed
from kjournal_replicator.check.recheck import behind_horizon
from kjournal_replicator.check.recheck import recheck_journals
from kjournal_replicator.check.recheck import settle_pointer2
from kjournal_replicator.check.repair import CHANGED
from kjournal_replicator.check.repair import REPAIRED
from kjournal_replicator.check.repair import repair_journal
from kjournal_replicator.check.repair import repair_pointer2
from kjournal_replicator.check.task import CheckTask
from kjournal_replicator.check.task import check_one
from kjournal_replicator.ranges import OffsetRange
from kjournal_replicator.run_metrics import hand_on
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_replicator.spark import build_spark
from kjournal_replicator.spark import read_ranges

__all__ = ["CheckOptions", "run_check"]

log = logging.getLogger(__name__)

JOB = "kjournal-check"


@dataclass(frozen=True)
class CheckOptions:
    topics: Sequence[str]
    local: bool = False  # in this process instead of a Spark job
    repair: bool = False
    settle_s: float = 30.0  # how long a difference may take to resolve itself (see recheck.py)
    metrics_file: Path | None = None
    pushgateway: str | None = None


@dataclass
class _Plan:
    topic: str
    offsets: dict[int, tuple[int, int]]  # partition → (beginning, end)
    stored_ids: dict[int, list[str]]  # partition → ids with a head in Cassandra


def run_check(settings: ReplicatorSettings, options: CheckOptions) -> list[TopicReport]:
    metrics = PrometheusMetrics()
    session = connect(settings.cassandra)
    spark: SparkSession | None = None
    reports = []
    try:
        snapshot = CassandraSnapshotReader(
            session, settings.cassandra.names, java_version=settings.cassandra.java_version
        )
        for topic in options.topics:
            started = time.perf_counter()
            started_at = datetime.now(UTC)
            plan = asyncio.run(_plan(settings, snapshot, topic))
            if not options.local and spark is None:
                spark = build_spark(_check_spark(settings))
            passing = time.perf_counter()
            if spark is None:
                results = asyncio.run(_local_pass(settings, snapshot, plan, started_at))
            else:
                results = _spark_pass(spark, settings, snapshot, plan, started_at)
            pass_seconds = time.perf_counter() - passing
            report = TopicReport(
                topic,
                "local" if options.local else "spark",
                partitions=len(plan.offsets),
                repair_requested=options.repair,
            )
            asyncio.run(_settle(report, results, settings, session, snapshot, options))
            report.seconds = time.perf_counter() - started
            report.pass_seconds = pass_seconds
            _record(metrics, report)
            log.info(
                "checked %s: %d journals, %d events in %.1f s; %d differ",
                topic,
                report.journals,
                report.events,
                report.seconds,
                len(report.differing),
            )
            reports.append(report)
    finally:
        if spark is not None:
            spark.stop()
        session.cluster.shutdown()
    hand_on(metrics, JOB, options.metrics_file, options.pushgateway)
    return reports


def _check_spark(settings: ReplicatorSettings) -> ReplicatorSettings:
    spark = settings.spark.model_copy(update={"app_name": "kjournal-check"})
    return settings.model_copy(update={"spark": spark})


async def _plan(
    settings: ReplicatorSettings, snapshot: CassandraSnapshotReader, topic: str
) -> _Plan:
    async with KafkaLog(settings.kafka) as kafka:
        count = await kafka.partition_count(topic)
        offsets = await kafka.offsets(topic, count)
    stored: dict[int, list[str]] = {partition: [] for partition in offsets}
    for id in sorted(snapshot.ids(topic)):
        stored.setdefault(partition_for(id.encode(), count), []).append(id)
    return _Plan(topic, offsets, stored)


async def _local_pass(
    settings: ReplicatorSettings,
    snapshot: CassandraSnapshotReader,
    plan: _Plan,
    started_at: datetime,
) -> list[PartitionResult]:
    results = []
    async with KafkaLog(settings.kafka) as kafka:
        for partition, (beginning, end) in sorted(plan.offsets.items()):
            records = [r async for r in kafka.records(plan.topic, partition, beginning, end)]
            results.append(
                _check_in_process(settings, snapshot, plan, partition, records, started_at)
            )
    return results


def _check_in_process(
    settings: ReplicatorSettings,
    snapshot: CassandraSnapshotReader,
    plan: _Plan,
    partition: int,
    records: Sequence[ConsumedRecord],
    started_at: datetime,
) -> PartitionResult:
    return check_one(
        plan.topic,
        partition,
        records,
        plan.offsets[partition],
        snapshot,
        plan.stored_ids.get(partition, ()),
        settings.cassandra,
        started_at,
    )


def _spark_pass(
    spark: SparkSession,
    settings: ReplicatorSettings,
    snapshot: CassandraSnapshotReader,
    plan: _Plan,
    started_at: datetime,
) -> list[PartitionResult]:
    """One task per Kafka partition holding records; empty partitions are checked here."""
    ranges = [
        OffsetRange(plan.topic, partition, beginning, end)
        for partition, (beginning, end) in sorted(plan.offsets.items())
        if end > beginning
    ]
    results: list[PartitionResult] = []
    if ranges:
        bounds = {(r.topic, r.partition): (r.from_offset, r.until_offset) for r in ranges}
        ids: Mapping[tuple[str, int], list[str]] = {
            (plan.topic, partition): found for partition, found in plan.stored_ids.items()
        }
        broadcast = spark.sparkContext.broadcast(dict(ids))
        try:
            task = CheckTask(settings.cassandra, bounds, broadcast, started_at)
            rdd = read_ranges(spark, settings, ranges).selectExpr(*COLUMNS).rdd
            results = rdd.mapPartitions(task).collect()
        finally:
            broadcast.unpersist()
        missing = sorted(set(bounds) - {(r.topic, r.partition) for r in results})
        if missing:
            raise MicroBatchError(f"the check's tasks returned no result for {missing}")
    done = {result.partition for result in results}
    for partition in sorted(set(plan.offsets) - done):
        results.append(_check_in_process(settings, snapshot, plan, partition, [], started_at))
    return sorted(results, key=lambda result: result.partition)


async def _settle(
    report: TopicReport,
    results: list[PartitionResult],
    settings: ReplicatorSettings,
    session: Session,
    snapshot: CassandraSnapshotReader,
    options: CheckOptions,
) -> None:
    cassandra = settings.cassandra
    store = (
        CassandraReplicatedStore(
            session,
            cassandra.names,
            segment_size=cassandra.segment_size,
            java_version=cassandra.java_version,
        )
        if options.repair
        else None
    )
    async with KafkaLog(settings.kafka) as kafka:

        async def partition(result: PartitionResult) -> None:
            report.journals += result.journals
            report.events += result.events
            report.records += max(result.end - result.beginning, 0)
            unchecked = [r for r in result.results if r.unchecked is not None]
            pointer_findings = await settle_pointer2(result, snapshot, kafka, options.settle_s)
            differing = [r.key.id for r in result.results if r.findings]
            outcome = await recheck_journals(
                result.topic,
                result.partition,
                result.beginning,
                differing,
                snapshot,
                kafka,
                horizon=behind_horizon(pointer_findings, result),
                segment_size=cassandra.segment_size,
                expiry_zone=cassandra.expiry_zone,
                settle_s=options.settle_s,
            )
            confirmed = [o for o in outcome.values() if isinstance(o, Confirmed)]
            unchecked += [o for o in outcome.values() if isinstance(o, JournalResult)]
            if store is not None:
                statuses = [
                    await _repair(c, result, store, snapshot, kafka, settings, options)
                    for c in confirmed
                ]
                for c, status in zip(confirmed, statuses, strict=True):
                    report.repaired[c.result.key.id] = status
                all_same = not unchecked and all(s == REPAIRED for s in statuses)
                pointer = repair_pointer2(result, pointer_findings, store, all_same=all_same)
                if pointer is not None:
                    report.pointer2_repaired[result.partition] = pointer
            report.differing += [c.result for c in confirmed]
            report.unchecked += unchecked
            report.partition_findings += [(result.partition, f) for f in pointer_findings]

        await asyncio.gather(*(partition(result) for result in results))


async def _repair(
    confirmed: Confirmed,
    result: PartitionResult,
    store: CassandraReplicatedStore,
    snapshot: CassandraSnapshotReader,
    kafka: KafkaLog,
    settings: ReplicatorSettings,
    options: CheckOptions,
) -> str:
    """Repair one journal; one that changed meanwhile is compared again and repaired only if it
    still differs at the new end."""
    cassandra = settings.cassandra
    for _ in range(2):
        status = await repair_journal(
            confirmed,
            store,
            snapshot,
            kafka,
            segment_size=cassandra.segment_size,
            expiry_zone=cassandra.expiry_zone,
        )
        if status != CHANGED:
            return status
        key = confirmed.result.key
        again = (
            await recheck_journals(
                key.topic,
                result.partition,
                result.beginning,
                [key.id],
                snapshot,
                kafka,
                horizon=None,
                segment_size=cassandra.segment_size,
                expiry_zone=cassandra.expiry_zone,
                settle_s=options.settle_s,
            )
        )[key.id]
        if again is None:
            return "the same when compared again (changed during the run)"
        if not isinstance(again, Confirmed):
            return f"not repaired: {again.unchecked.value if again.unchecked else CHANGED}"
        confirmed = again
    return f"not repaired: {CHANGED}"


def _record(metrics: PrometheusMetrics, report: TopicReport) -> None:
    topic = report.topic
    differing = len(report.differing)
    unchecked = len(report.unchecked)
    repaired = sum(1 for status in report.repaired.values() if status == REPAIRED)
    metrics.increment(CHECK_JOURNALS.name, report.journals - differing, topic=topic, result="same")
    metrics.increment(CHECK_JOURNALS.name, differing, topic=topic, result="differs")
    metrics.increment(CHECK_JOURNALS.name, unchecked, topic=topic, result="unchecked")
    metrics.increment(CHECK_JOURNALS.name, repaired, topic=topic, result="repaired")
    metrics.increment(CHECK_EVENTS.name, report.events, topic=topic)
    metrics.observe(CHECK_RUN_SECONDS.name, report.seconds, topic=topic)
