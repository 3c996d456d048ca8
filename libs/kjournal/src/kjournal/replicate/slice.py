"""Replicating one Kafka partition's slice of records into the eventual store (docs/replication.md).

`replicate_partition` is plain, synchronous Python: the Spark job calls it per partition and
micro-batch, tests call it directly. Steps:

1. drop records at or below the partition's `pointer2` (already replicated);
2. decode each record's key and `journal.action` header; group the actions by journal
   (`collect.py`);
3. load every journal's head (one bulk call); then plan each journal, without I/O and without
   changing what was collected (`planner.py`): decode the payloads of the appends a head does not
   cover yet, drop the appends the append rule drops (`dropped.py`), fold the journal's actions
   into batches (`kjournal.fold.batch`) and plan them against the head (`kjournal.fold.plan`);
4. let the store run every journal's planned steps (rows before head; journals concurrently,
   bounded by the store);
5. once every journal succeeded, move `pointer2` to the slice's highest offset — ignored records,
   marks and quarantined records included, so a slice of marks advances it too.

A failure in any journal leaves `pointer2` where it was; the caller retries the slice and the
head offsets make the retry skip what was already applied (docs/replication.md). A record that
cannot be decoded is quarantined, and its journal's later records parked behind it
(`quarantine.py`); the rest of the partition keeps replicating.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import tzinfo

from kjournal.metrics import NOOP_METRICS
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import REPLICATOR_BATCHES
from kjournal.metrics.catalogue import REPLICATOR_DROPPED_APPENDS
from kjournal.metrics.catalogue import REPLICATOR_EVENTS
from kjournal.metrics.catalogue import REPLICATOR_IGNORED_RECORDS
from kjournal.metrics.catalogue import REPLICATOR_POINTER2_OFFSET
from kjournal.metrics.catalogue import REPLICATOR_QUARANTINED_RECORDS
from kjournal.metrics.catalogue import REPLICATOR_RECORD_AGE
from kjournal.metrics.catalogue import REPLICATOR_RECORDS
from kjournal.metrics.catalogue import REPLICATOR_SLICE_SECONDS
from kjournal.ports import ReplicatedStore
from kjournal.replicate.collect import Slice
from kjournal.replicate.collect import collect
from kjournal.replicate.dropped import Verdicts
from kjournal.replicate.dropped import classify_dropped
from kjournal.replicate.planner import actions_before
from kjournal.replicate.planner import known_cutoff
from kjournal.replicate.planner import plan_journal
from kjournal.replicate.quarantine import quarantined_records
from kjournal.wire.record import ConsumedRecord

__all__ = ["ReplicationResult", "replicate_partition"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReplicationResult:
    topic: str
    partition: int
    pointer2_before: int | None
    pointer2: int | None  # after the slice
    records: int = 0  # records above the old pointer2
    ignored: int = 0  # not journal records (no key, timestamp or action header)
    journals: int = 0  # distinct journals with records in the slice
    batches: int = 0  # batches that changed the store
    events: int = 0  # journal rows written
    quarantined: int = 0  # undecodable records
    parked: int = 0  # records behind a quarantined one
    dropped: int = 0  # appends the append rule dropped (replays, refusals, conflicts, gaps)
    duplicates: int = 0  # their events
    conflicts: int = 0  # dropped appends that were conflicts
    refused: int = 0  # dropped appends whose condition failed
    gaps: int = 0  # dropped appends that skipped more than MAX_GAP seqNrs


def replicate_partition(
    topic: str,
    partition: int,
    records: Iterable[ConsumedRecord],
    store: ReplicatedStore,
    now: datetime,
    *,
    metrics: Metrics = NOOP_METRICS,
    expiry_zone: tzinfo = UTC,
) -> ReplicationResult:
    """Apply one partition's records (in offset order) to `store`; see the module docstring.

    `now` (timezone-aware) is the replication time: `created`/`updated` columns and expiry dates,
    which are dates in `expiry_zone` (`CassandraSettings.expiry_time_zone`).
    If any journal fails, the first error is raised once the store has finished with every
    journal, and `pointer2` is left as it was.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    started = time.perf_counter()
    pointer = store.pointer2(topic, partition)
    slice_ = collect(topic, partition, records, pointer)
    journals = list(slice_.journals.values())
    earlier = store.quarantined_from(topic, partition, list(slice_.journals)) if journals else {}
    known = [known_cutoff(journal, earlier.get(journal.key.id)) for journal in journals]
    loading = [
        j.key for j, cutoff in zip(journals, known, strict=True) if actions_before(j, cutoff)
    ]
    heads = dict(zip(loading, store.heads(loading), strict=True))
    plans = [
        plan_journal(
            journal,
            heads.get(journal.key),
            cutoff,
            now,
            partition=partition,
            segment_size=store.segment_size,
            expiry_zone=expiry_zone,
        )
        for journal, cutoff in zip(journals, known, strict=True)
    ]
    quarantine = [
        record
        for journal, plan in zip(journals, plans, strict=True)
        if plan.cutoff is not None
        for record in quarantined_records(journal, plan.cutoff.offset, plan.cutoff.error, now)
    ]
    quarantined = sum(plan.cutoff is not None and plan.cutoff.error is not None for plan in plans)
    verdicts = [
        classify_dropped(plan.key, plan.head, plan.dropped, store, now)
        if plan.dropped
        else Verdicts()
        for plan in plans
    ]
    conflicts = [row for verdict in verdicts for row in verdict.rows]
    if conflicts:
        store.record_conflicts(conflicts)
    if quarantine:
        store.quarantine(quarantine)
    writing = [plan for plan in plans if plan.steps]
    errors = store.write([(plan.key, plan.steps) for plan in writing])
    failed = [(plan, error) for plan, error in zip(writing, errors, strict=True) if error]
    if failed:
        for plan, error in failed:
            log.error("replication of %s failed, partition %d: %s", plan.key, partition, error)
        first = failed[0][1]
        assert first is not None
        if len(failed) > 1:
            first.add_note(f"{len(failed) - 1} other journal(s) of this slice failed too")
        raise first

    new_pointer = pointer
    if slice_.max_offset is not None and (pointer is None or slice_.max_offset > pointer):
        store.set_pointer2(topic, partition, slice_.max_offset, now, insert=pointer is None)
        new_pointer = slice_.max_offset

    result = ReplicationResult(
        topic=topic,
        partition=partition,
        pointer2_before=pointer,
        pointer2=new_pointer,
        records=slice_.count,
        ignored=slice_.ignored,
        journals=len(journals),
        batches=sum(plan.batches for plan in plans),
        events=sum(plan.events for plan in plans),
        quarantined=quarantined,
        parked=len(quarantine) - quarantined,
        dropped=sum(len(plan.dropped) for plan in plans),
        duplicates=sum(verdict.events for verdict in verdicts),
        conflicts=sum(verdict.conflicts for verdict in verdicts),
        refused=sum(verdict.refused for verdict in verdicts),
        gaps=sum(verdict.gaps for verdict in verdicts),
    )
    _record_metrics(metrics, result, time.perf_counter() - started, slice_, now)
    log.debug(
        "replicated %s partition %d up to offset %s: %d records, %d journals, %d events",
        topic,
        partition,
        new_pointer,
        result.records,
        result.journals,
        result.events,
    )
    return result


def _record_metrics(
    metrics: Metrics, result: ReplicationResult, seconds: float, slice_: Slice, now: datetime
) -> None:
    topic = result.topic
    metrics.observe(REPLICATOR_SLICE_SECONDS.name, seconds, topic=topic)
    metrics.increment(REPLICATOR_RECORDS.name, result.records, topic=topic)
    metrics.increment(REPLICATOR_IGNORED_RECORDS.name, result.ignored, topic=topic)
    metrics.increment(REPLICATOR_BATCHES.name, result.batches, topic=topic)
    metrics.increment(REPLICATOR_EVENTS.name, result.events, topic=topic)
    replays = result.dropped - result.conflicts - result.refused - result.gaps
    for kind, count in (
        ("replay", replays),
        ("refused", result.refused),
        ("conflict", result.conflicts),
        ("gap", result.gaps),
    ):
        if count:
            metrics.increment(REPLICATOR_DROPPED_APPENDS.name, count, topic=topic, kind=kind)
    for kind, count in (("poison", result.quarantined), ("parked", result.parked)):
        if count:
            metrics.increment(REPLICATOR_QUARANTINED_RECORDS.name, count, topic=topic, kind=kind)
    if result.pointer2 is not None:
        metrics.set(
            REPLICATOR_POINTER2_OFFSET.name,
            result.pointer2,
            topic=topic,
            partition=str(result.partition),
        )
    if slice_.newest_timestamp_ms is not None:
        age = now.timestamp() - slice_.newest_timestamp_ms / 1000
        metrics.observe(REPLICATOR_RECORD_AGE.name, max(age, 0.0), topic=topic)
