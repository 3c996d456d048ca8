"""Replicating one Kafka partition's slice of records into the eventual store (docs/replication.md).

`replicate_partition` is plain, synchronous Python: the Spark job calls it per partition and
micro-batch, tests call it directly. Steps:

1. drop records at or below the partition's `pointer2` (already replicated);
2. decode each record's key and `journal.action` header; group the actions by journal
   (`collect.py`);
3. load every journal's head (one bulk call); then, without I/O: decode the payloads of the
   appends a head does not cover yet, drop the appends the append rule drops (`dropped.py`), fold
   each journal's actions into batches (`kjournal.fold.batch`) and plan them against the head
   (`kjournal.fold.plan`);
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
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from kjournal.fold.batch import Appends, DeleteBatch, fold_batches
from kjournal.fold.plan import InsertRows, Plan, Step, plan_append, plan_delete, plan_purge
from kjournal.metrics import NOOP_METRICS, Metrics
from kjournal.metrics.catalogue import (
    REPLICATOR_BATCHES,
    REPLICATOR_DROPPED_APPENDS,
    REPLICATOR_EVENTS,
    REPLICATOR_IGNORED_RECORDS,
    REPLICATOR_POINTER2_OFFSET,
    REPLICATOR_QUARANTINED_RECORDS,
    REPLICATOR_RECORD_AGE,
    REPLICATOR_RECORDS,
    REPLICATOR_SLICE_SECONDS,
)
from kjournal.model import Append, Key, PartitionOffset
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.ports import ReplicatedStore
from kjournal.replicate.collect import Decoded, JournalSlice, Slice, collect, decode_payload
from kjournal.replicate.dropped import DroppedAppend, Verdicts, classify_dropped, taken
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
    if journals:
        ids = [journal.key.id for journal in journals]
        for id, offset in store.quarantined_from(topic, partition, ids).items():
            slice_.journals[id].quarantined_from = offset
    for journal in journals:
        journal.cut_at_known_poison()
    loading = [journal for journal in journals if journal.actions]
    for journal, head in zip(loading, store.heads([j.key for j in loading]), strict=True):
        journal.head = head

    works = [
        _plan(journal, now, partition, store.segment_size, expiry_zone) for journal in journals
    ]
    for work in works:
        if work.dropped:
            work.verdicts = classify_dropped(work.key, work.head, work.dropped, store, now)
    conflicts = [row for work in works for row in work.verdicts.rows]
    if conflicts:
        store.record_conflicts(conflicts)
    quarantine = [record for work in works for record in work.quarantine]
    if quarantine:
        store.quarantine(quarantine)
    writing = [work for work in works if work.steps]
    errors = store.write([(work.key, work.steps) for work in writing])
    failed = [(work, error) for work, error in zip(writing, errors, strict=True) if error]
    if failed:
        for work, error in failed:
            log.error("replication of %s failed, partition %d: %s", work.key, partition, error)
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
        batches=sum(work.batches for work in works),
        events=sum(work.events for work in works),
        quarantined=sum(work.quarantined for work in works),
        parked=len(quarantine) - sum(work.quarantined for work in works),
        dropped=sum(len(work.dropped) for work in works),
        duplicates=sum(work.verdicts.events for work in works),
        conflicts=sum(work.verdicts.conflicts for work in works),
        refused=sum(work.verdicts.refused for work in works),
        gaps=sum(work.verdicts.gaps for work in works),
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


# Planning one journal


@dataclass(slots=True)
class _Work:
    key: Key
    head: JournalHead | None = None  # as loaded, before this slice
    steps: list[Step] = field(default_factory=list)
    quarantine: list[QuarantinedRecord] = field(default_factory=list)
    dropped: list[DroppedAppend] = field(default_factory=list)
    batches: int = 0
    events: int = 0
    quarantined: int = 0
    verdicts: Verdicts = field(default_factory=Verdicts)  # of `dropped`


def _plan(
    journal: JournalSlice, now: datetime, partition: int, segment_size: int, expiry_zone: tzinfo
) -> _Work:
    key = journal.key
    head = journal.head
    covered = -1 if head is None else head.partition_offset.offset
    decoded: dict[int, Decoded] = {}
    # Every append the head does not cover is decoded, even one a later delete folds away, so
    # whether a record is poison does not depend on how the partition was sliced.
    for action in journal.actions:
        if isinstance(action.action, Append) and action.offset > covered:
            result = decode_payload(action, action.action)
            if isinstance(result, str):
                journal.cut(action.offset, result)
                break
            decoded[action.offset] = result

    work = _Work(key, head)
    if journal.cutoff is not None:
        work.quarantine = quarantined_records(journal, journal.cutoff, journal.error, now)
        work.quarantined = 0 if journal.error is None else 1

    actions = taken(journal.actions, head, decoded, work.dropped)
    for batch in fold_batches(actions):
        position = PartitionOffset(partition, batch.offset)
        plan: Plan | None
        if isinstance(batch, Appends):
            offset = -1 if head is None else head.partition_offset.offset
            if batch.offset <= offset:
                continue
            events = [
                event
                for record in batch.records
                if record.offset > covered
                for event in decoded[record.offset].events
            ]
            plan = plan_append(
                head,
                position,
                now,
                decoded[batch.offset].expire_after,
                events,
                dropped_from=batch.dropped_from,
                segment_size=segment_size,
                expiry_zone=expiry_zone,
            )
        elif isinstance(batch, DeleteBatch):
            plan = plan_delete(
                head, position, now, batch.to, batch.origin, segment_size=segment_size
            )
        else:
            plan = plan_purge(head, position, dropped=batch.dropped, segment_size=segment_size)
        if plan is None:
            continue
        work.steps += [step for step in plan.steps if step]
        work.events += sum(len(w.events) for w in plan.writes if isinstance(w, InsertRows))
        work.batches += plan.head != head
        head = plan.head
    return work


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
