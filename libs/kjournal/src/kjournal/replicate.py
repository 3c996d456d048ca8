"""Replicating one Kafka partition's slice of records into the eventual store (docs/replication.md).

`replicate_partition` is plain, synchronous Python: the Spark job calls it per partition and
micro-batch, tests call it directly. Steps:

1. drop records at or below the partition's `pointer2` (already replicated);
2. decode each record's key and `journal.action` header; group the actions by journal;
3. load every journal's head (one bulk call); then, without I/O: decode the payloads of the
   appends a head does not cover yet, drop duplicate events (below), fold each journal's actions
   into batches (`kjournal.fold.batch`) and plan them against the head (`kjournal.fold.plan`);
4. let the store run every journal's planned steps (rows before head; journals concurrently,
   bounded by the store);
5. once every journal succeeded, move `pointer2` to the slice's highest offset — ignored records,
   marks and quarantined records included, so a slice of marks advances it too.

A failure in any journal leaves `pointer2` where it was; the caller retries the slice and the
head offsets make the retry skip what was already applied (docs/replication.md).

Dropped appends. In offset order, each append is taken or dropped whole by the append rule
(fold/append_rule.py), the rule the read side and the writer's outcome apply too. A dropped append
is never applied. A replay (a retry: the same events as the journal holds) changes nothing; a
refusal (its condition failed) was answered 412 to its writer; a conflict (an unconditional append
over seqNrs the journal holds, with other content) was answered 409 and is also recorded in the
store, one row per repeated event (its offset and the kept event's), counted and logged.

Poison records. A record whose header or payload cannot be decoded is written to the quarantine
table with its raw bytes and the reason; that flags its journal (reads of it fail loudly) and the
rest of the partition keeps replicating. The journal's later records are not applied — applying
them over a missing action would store a state that never existed — but *parked* in the same
table, in order and raw, so nothing depends on Kafka retention until an operator repairs the
poison record and re-applies what follows it. The journal stays quarantined from that offset on,
in this slice and all later ones, until its quarantine rows are removed. Marks are not parked:
they have no storage effect. Every quarantine row is a function of the record and of the first
quarantined offset only, so replaying a slice rewrites the same rows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from opentelemetry.trace import get_current_span

from kjournal.errors import FormatError, InvalidInput
from kjournal.fold.append_rule import MAX_GAP, Dropped, dropped_kind, same_content, takes
from kjournal.fold.batch import Appends, DeleteBatch, fold_batches
from kjournal.fold.head_info import HeadInfo
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
from kjournal.model import (
    ACTION_HEADER,
    ActionRecord,
    Append,
    EventRecord,
    ExpireAfter,
    Key,
    Mark,
    PartitionOffset,
    Purge,
    RecordMetadata,
    SeqRange,
)
from kjournal.model.conflict import Conflict
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.ports import ReplicatedStore
from kjournal.spans import conventions as sem
from kjournal.wire.events import decode_events
from kjournal.wire.record import ConsumedRecord, decode_action_record

__all__ = ["ReplicationResult", "replicate_partition"]

log = logging.getLogger(__name__)

_DECODE_ERRORS = (FormatError, InvalidInput)
_MAX_REASON = 1000


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
    slice_ = _collect(topic, partition, records, pointer)
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
    conflicts = _classify_dropped(works, store, now)
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
        duplicates=sum(work.dropped_events for work in works),
        conflicts=sum(work.conflicts for work in works),
        refused=sum(work.refused for work in works),
        gaps=sum(work.gaps for work in works),
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


# Collecting the slice


@dataclass(slots=True)
class _Journal:
    """One journal's part of the slice, in offset order."""

    key: Key
    decoded: list[ActionRecord] = field(default_factory=list)  # before any bad header
    actions: list[ActionRecord] = field(default_factory=list)  # those before the cutoff
    raw: dict[int, ConsumedRecord] = field(default_factory=dict)  # offset → record
    poison: tuple[ConsumedRecord, str] | None = None  # the first undecodable header, and why
    behind: list[tuple[ConsumedRecord, str | None]] = field(default_factory=list)  # after it
    quarantined_from: int | None = None  # by an earlier slice
    # The first quarantined offset: from an earlier slice, a bad header or a bad payload,
    # whichever comes first, and why this slice found it bad (None if it did not).
    cutoff: int | None = None
    error: str | None = None
    head: JournalHead | None = None

    def cut_at_known_poison(self) -> None:
        """Set the cutoff from earlier slices and bad headers; keep only actions before it."""
        self.cutoff = self.quarantined_from
        if self.poison is not None and (self.cutoff is None or self.poison[0].offset < self.cutoff):
            self.cutoff, self.error = self.poison[0].offset, self.poison[1]
        self.cut(self.cutoff, self.error)

    def cut(self, cutoff: int | None, error: str | None) -> None:
        self.cutoff, self.error = cutoff, error
        self.actions = [a for a in self.decoded if cutoff is None or a.offset < cutoff]

    def actions_after(self, offset: int) -> list[ActionRecord]:
        return [action for action in self.decoded if action.offset > offset]


@dataclass(slots=True)
class _Slice:
    journals: dict[str, _Journal] = field(default_factory=dict)
    count: int = 0
    ignored: int = 0
    max_offset: int | None = None
    newest_timestamp_ms: int | None = None


def _collect(
    topic: str, partition: int, records: Iterable[ConsumedRecord], pointer: int | None
) -> _Slice:
    slice_ = _Slice()
    previous = -1
    for record in records:
        if record.topic != topic or record.partition != partition:
            raise ValueError(
                f"record of {record.topic}:{record.partition} in the slice of {topic}:{partition}"
            )
        if record.offset <= previous:
            raise ValueError(f"records out of order: offset {record.offset} after {previous}")
        previous = record.offset
        if pointer is not None and record.offset <= pointer:
            continue
        slice_.count += 1
        slice_.max_offset = record.offset
        if record.timestamp_ms is not None and record.timestamp_ms >= 0:
            slice_.newest_timestamp_ms = record.timestamp_ms

        error: str | None = None
        action: ActionRecord | None = None
        try:
            action = decode_action_record(record)
        except _DECODE_ERRORS as exc:
            error = f"header: {exc}"
        if action is None and error is None:
            slice_.ignored += 1
            continue

        id = action.action.key.id if action is not None else _record_id(record)
        journal = slice_.journals.get(id)
        if journal is None:
            journal = slice_.journals[id] = _Journal(Key(topic, id))
        journal.raw[record.offset] = record
        if journal.poison is None and action is not None:
            journal.decoded.append(action)
        elif journal.poison is None and error is not None:
            journal.poison = (record, error)
        elif action is None or not isinstance(action.action, Mark):
            journal.behind.append((record, error))
    return slice_


# Planning one journal


@dataclass(frozen=True, slots=True)
class _DroppedAppend:
    """An append the append rule drops: its events, and the journal's kept events of this slice
    for the seqNrs it repeats (those not here are looked up in the store)."""

    events: tuple[EventRecord, ...]
    expect: int | None
    seq_nr: int  # the journal's seqNr when the append came (0: no journal)
    kept: dict[int, EventRecord]


@dataclass(slots=True)
class _Work:
    key: Key
    head: JournalHead | None = None  # as loaded, before this slice
    steps: list[Step] = field(default_factory=list)
    quarantine: list[QuarantinedRecord] = field(default_factory=list)
    dropped: list[_DroppedAppend] = field(default_factory=list)
    batches: int = 0
    events: int = 0
    quarantined: int = 0
    conflicts: int = 0
    refused: int = 0
    gaps: int = 0
    dropped_events: int = 0


@dataclass(frozen=True, slots=True)
class _Decoded:
    events: tuple[EventRecord, ...]
    expire_after: ExpireAfter | None


def _plan(
    journal: _Journal, now: datetime, partition: int, segment_size: int, expiry_zone: tzinfo
) -> _Work:
    key = journal.key
    head = journal.head
    covered = -1 if head is None else head.partition_offset.offset
    decoded: dict[int, _Decoded] = {}
    # Every append the head does not cover is decoded, even one a later delete folds away, so
    # whether a record is poison does not depend on how the partition was sliced.
    for action in journal.actions:
        if isinstance(action.action, Append) and action.offset > covered:
            result = _decode(action, action.action)
            if isinstance(result, str):
                journal.cut(action.offset, result)
                break
            decoded[action.offset] = result

    work = _Work(key, head)
    if journal.cutoff is not None:
        work.quarantine = _quarantined_records(journal, journal.cutoff, journal.error, now)
        work.quarantined = 0 if journal.error is None else 1

    actions = _taken(journal.actions, head, decoded, work.dropped)
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


def _taken(
    actions: list[ActionRecord],
    head: JournalHead | None,
    decoded: dict[int, _Decoded],
    dropped: list[_DroppedAppend],
) -> list[ActionRecord]:
    """`actions` without the appends the append rule drops (fold/append_rule.py), folded in
    offset order as the read side folds them; the dropped ones are added to `dropped`."""
    covered = -1 if head is None else head.partition_offset.offset
    info = HeadInfo.of_head(head)
    kept_here: dict[int, EventRecord] = {}  # this slice's taken events, by seqNr
    result: list[ActionRecord] = []
    for record in actions:
        action = record.action
        if record.offset <= covered:
            result.append(record)  # the head covers it: planning skips it
            continue
        if isinstance(action, Append):
            events = decoded[record.offset].events
            if not takes(info.seq_nr, action.header.range.from_, action.header.expect):
                seq_nr = info.seq_nr or 0
                repeated: dict[int, EventRecord] = {
                    e.seq_nr: kept_here[e.seq_nr] for e in events if e.seq_nr in kept_here
                }
                dropped.append(_DroppedAppend(events, action.header.expect, seq_nr, repeated))
                info = info.apply(record)
                continue
            kept_here.update((event.seq_nr, event) for event in events)
        elif isinstance(action, Purge):
            kept_here.clear()
        info = info.apply(record)
        result.append(record)
    return result


def _classify_dropped(works: list[_Work], store: ReplicatedStore, now: datetime) -> list[Conflict]:
    """Sort each dropped append into replay, refusal or conflict (fold/append_rule.py) by
    comparing it with the events the journal keeps (from this slice, else from the store), and
    return the conflicts' rows. A repeated event without a kept counterpart (a delete removed it,
    or the journal never held its seqNr) is not identical: as the writer's answer, which never
    calls a replay what no reader returns."""
    conflicts: list[Conflict] = []
    for work in works:
        if not work.dropped:
            continue
        missing = {
            e.seq_nr
            for d in work.dropped
            for e in d.events
            if e.seq_nr <= d.seq_nr and e.seq_nr not in d.kept
        }
        stored = (
            store.stored_events(work.key, work.head, missing)
            if missing and work.head is not None
            else {}
        )
        for dropped in work.dropped:
            kept = [(e, dropped.kept.get(e.seq_nr) or stored.get(e.seq_nr)) for e in dropped.events]
            identical = dropped.events[-1].seq_nr <= dropped.seq_nr and all(
                other is not None and same_content(event, other) for event, other in kept
            )
            kind = dropped_kind(
                identical, dropped.expect, dropped.events[0].seq_nr, dropped.seq_nr or None
            )
            work.dropped_events += len(dropped.events)
            if kind is Dropped.REFUSED:
                work.refused += 1
            if kind is Dropped.GAP:
                work.gaps += 1
                log.warning(
                    "journal %s: the append of seqNrs from %d skips more than %d seqNrs of a "
                    "journal at seqNr %d; it is dropped",
                    work.key,
                    dropped.events[0].seq_nr,
                    MAX_GAP,
                    dropped.seq_nr,
                )
            if kind is not Dropped.CONFLICT:
                continue
            rows = [
                Conflict(
                    topic=work.key.topic,
                    id=work.key.id,
                    seq_nr=event.seq_nr,
                    dropped=event.partition_offset,
                    kept=other.partition_offset,
                    detected_at=now,
                )
                for event, other in kept
                if other is not None
            ]
            conflicts += rows
            work.conflicts += 1
            log.warning(
                "journal %s: the append at offset %d repeats seqNr %s of a journal at seqNr %d "
                "with other content; it is dropped and recorded as a conflict",
                work.key,
                dropped.events[0].partition_offset.offset,
                SeqRange(dropped.events[0].seq_nr, dropped.events[-1].seq_nr),
                dropped.seq_nr,
            )
    return conflicts


def _decode(record: ActionRecord, action: Append) -> _Decoded | str:
    """The append's events as rows will hold them, or why its payload is poison."""
    try:
        events = decode_events(action.header.payload_type, action.payload)
    except _DECODE_ERRORS as exc:
        return f"payload: {exc}"
    if events.range != action.header.range:
        return (
            f"payload: events {events.range} do not match the header's range {action.header.range}"
        )
    metadata = RecordMetadata(action.header.metadata, events.metadata)
    rows = tuple(
        EventRecord(
            event,
            action.timestamp,
            record.partition_offset,
            action.header.origin,
            action.header.version,
            metadata,
            action.headers,
        )
        for event in events.events
    )
    return _Decoded(rows, events.metadata.expire_after)


# Quarantine


def _quarantined_records(
    journal: _Journal, cutoff: int, error: str | None, now: datetime
) -> list[QuarantinedRecord]:
    """The record at `cutoff` (if this slice found it bad), then every later one, parked."""
    key = journal.key
    records: list[QuarantinedRecord] = []
    if error is not None:
        record = journal.raw[cutoff]
        records.append(_quarantined(key, record, error, now))
        current = get_current_span()
        if current.is_recording():
            current.add_event(
                "quarantined",
                {
                    sem.JOURNAL_ID: key.id,
                    sem.MESSAGING_PARTITION: str(record.partition),
                    sem.MESSAGING_KAFKA_OFFSET: cutoff,
                    sem.REASON: error[:_MAX_REASON],
                },
            )
        log.warning(
            "quarantined record %s:%d offset %d of journal %s: %s",
            key.topic,
            record.partition,
            cutoff,
            key,
            error[:_MAX_REASON],
        )

    later: list[tuple[ConsumedRecord, str | None]] = [
        (journal.raw[a.offset], None)
        for a in journal.actions_after(cutoff)
        if not isinstance(a.action, Mark)
    ]
    if journal.poison is not None and journal.poison[0].offset > cutoff:
        later.append(journal.poison)
    later += journal.behind
    why = f"parked: behind the quarantined record at offset {cutoff}"
    for record, own in later:
        reason = why if own is None else f"{why}; {own}"
        records.append(_quarantined(key, record, reason, now))
    if later:
        current = get_current_span()
        if current.is_recording():
            current.add_event(
                "parked",
                {
                    sem.JOURNAL_ID: key.id,
                    sem.RECORDS: len(later),
                    "kjournal.offset.first": later[0][0].offset,
                    "kjournal.offset.last": later[-1][0].offset,
                    "kjournal.behind_offset": cutoff,
                },
            )
        log.warning(
            "parked %d record(s) of journal %s, offsets %d..%d, behind offset %d",
            len(later),
            key,
            later[0][0].offset,
            later[-1][0].offset,
            cutoff,
        )
    return records


def _quarantined(key: Key, record: ConsumedRecord, reason: str, now: datetime) -> QuarantinedRecord:
    header = next((value for name, value in record.headers if name == ACTION_HEADER), None)
    timestamp = None
    if record.timestamp_ms is not None and record.timestamp_ms >= 0:
        timestamp = datetime.fromtimestamp(record.timestamp_ms / 1000, UTC)
    return QuarantinedRecord(
        topic=key.topic,
        partition=record.partition,
        offset=record.offset,
        id=key.id,
        reason=reason[:_MAX_REASON],
        header=header,
        value=record.value,
        timestamp=timestamp,
        quarantined_at=now,
    )


def _record_id(record: ConsumedRecord) -> str:
    """The journal id of a record whose header could not be decoded."""
    assert record.key is not None  # keyless records are ignored before their header is read
    return record.key.decode("utf-8", "replace")  # as decode_action_record


def _record_metrics(
    metrics: Metrics, result: ReplicationResult, seconds: float, slice_: _Slice, now: datetime
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
