"""Planning one batch against one journal head: pure, no I/O (docs/replication.md §3).

Given the head as stored (or None) and one batch, a planner returns `None` when the head already
covers the batch, else a `Plan`: the head once the batch is applied and the writes to get there, as
steps. A step's writes are independent (a store may run them concurrently); steps run in order.

Every plan writes rows first and the head last. The head holds the idempotency watermark (its
offset), so until the head is written a replay of the same records recomputes the same plan from
the same head, and re-running writes that already happened is harmless: inserts are upserts with
deterministic keys, deletes delete what is already gone.

Skip rules: an append or delete at an offset ≤ the head's offset is skipped; a purge needs a head
whose offset is ≤ its own (a purge never moves the head's offset, so a crashed purge is redone).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import tzinfo
from typing import TypeAlias

from kjournal.model import EventRecord
from kjournal.model import ExpireAfter
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model.head import Expiry
from kjournal.model.head import JournalHead


@dataclass(frozen=True, slots=True)
class InsertRows:
    """Upsert these events into one `journal` segment, tagged with the head's record_id."""

    segment: int
    events: tuple[EventRecord, ...]
    meta_record_id: uuid.UUID | None


@dataclass(frozen=True, slots=True)
class DeleteRows:
    """Delete one `journal` segment: all of it, or the rows with seqNr ≤ `to`."""

    segment: int
    to: SeqNr | None = None


@dataclass(frozen=True, slots=True)
class DeleteRow:
    """Delete one `journal` row: seqNr `seq_nr` written at `timestamp` (its clustering key).

    Never planned by the replicator: the check's repair removes rows the fold of Kafka does not
    have with it (kjournal.check.repair)."""

    segment: int
    seq_nr: SeqNr
    timestamp: datetime


@dataclass(frozen=True, slots=True)
class InsertHead:
    head: JournalHead
    created: datetime
    origin: str | None


@dataclass(frozen=True, slots=True)
class UpdateHead:
    """Set partition, offset and `updated`, plus whichever of the other fields is given."""

    partition_offset: PartitionOffset
    updated: datetime
    seq_nr: SeqNr | None = None
    delete_to: SeqNr | None = None
    expiry: Expiry | None = None
    remove_expiry: bool = False
    remove_delete_to: bool = False  # only the check's repair sets it (a delete_to never goes back)


@dataclass(frozen=True, slots=True)
class DeleteHead:
    pass


Write: TypeAlias = InsertRows | DeleteRows | DeleteRow | InsertHead | UpdateHead | DeleteHead
Step: TypeAlias = tuple[Write, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    head: JournalHead | None  # the head once every step has run
    steps: tuple[Step, ...]

    @property
    def writes(self) -> tuple[Write, ...]:
        return tuple(write for step in self.steps for write in step)


def journal_segment(seq_nr: int, segment_size: int) -> int:
    """The `journal` segment of a seqNr: (seqNr − 1) // segment_size, 0-based."""
    return (seq_nr - 1) // segment_size


def expire_on(expire_after: ExpireAfter, now: datetime, zone: tzinfo = UTC) -> date:
    """The date on which a journal last replicated at `now` expires: the date in `zone` of the
    instant `now + expire_after` (kafka-journal: `LocalDate.ofInstant`, in its JVM's zone)."""
    # The sum in UTC: an aware datetime's arithmetic in another zone would be wall-clock time.
    return (_utc(now) + expire_after.to_timedelta()).astimezone(zone).date()


def plan_append(
    head: JournalHead | None,
    position: PartitionOffset,
    now: datetime,
    expire_after: ExpireAfter | None,
    events: Sequence[EventRecord],
    *,
    dropped_from: SeqNr | None = None,
    segment_size: int,
    new_record_id: Callable[[], uuid.UUID] = uuid.uuid4,
    expiry_zone: tzinfo = UTC,
) -> Plan | None:
    """Append `events` (in seqNr order, each carrying its record's offset) as of `position`.

    Only used when the journal has no head yet: a new head gets delete_to = first seqNr − 1, where
    `dropped_from` (see `Appends`) may lower the first; `segment_size`; `new_record_id`.
    `expiry_zone`: the time zone of `expire_on` dates (see expire_on).
    """
    if not events:
        raise ValueError("an append batch needs at least one event")
    last = events[-1].seq_nr
    if head is None:
        first = events[0].seq_nr if dropped_from is None else min(events[0].seq_nr, dropped_from)
        expiry = (
            None
            if expire_after is None
            else Expiry(expire_after, expire_on(expire_after, now, expiry_zone))
        )
        new_head = JournalHead(
            partition_offset=position,
            segment_size=segment_size,
            seq_nr=last,
            delete_to=SeqNr(first - 1) if first > 1 else None,
            expiry=expiry,
            record_id=new_record_id(),
        )
        rows = _insert_rows(events, new_head)
        return Plan(new_head, (rows, (InsertHead(new_head, now, events[0].origin),)))

    if position.offset <= head.partition_offset.offset:
        return None
    covered = head.partition_offset.offset
    fresh = [event for event in events if event.partition_offset.offset > covered]
    expiry, update_expiry, remove_expiry = _expiry_change(
        head.expiry, expire_after, now, expiry_zone
    )
    new_head = replace(head, partition_offset=position, seq_nr=last, expiry=expiry)
    update = UpdateHead(
        position,
        now,
        seq_nr=last,
        expiry=expiry if update_expiry else None,
        remove_expiry=remove_expiry,
    )
    return Plan(new_head, (_insert_rows(fresh, new_head), (update,)))


def plan_delete(
    head: JournalHead | None,
    position: PartitionOffset,
    now: datetime,
    to: SeqNr,
    origin: str | None,
    *,
    segment_size: int,
) -> Plan | None:
    """Delete events ≤ `to`, clamped to the journal's seqNr.

    Without a head the journal does not exist: folding never drops an append in front of a delete
    (they form their own batch), so a head-less delete is a delete of nothing and is ignored.
    kafka-journal inserts a head with seqNr = delete_to = to instead; that "dead-end" journal hides
    a later append starting at 1, and its seqNr depends on how Kafka was sliced into batches.
    Unlike kafka-journal, delete_to never moves back: a delete smaller than the current delete_to
    only advances the head's offset.
    """
    if head is None:
        return None
    if position.offset <= head.partition_offset.offset:
        return None

    old_delete_to = head.delete_to or 0
    seq_nr = SeqNr(max(head.seq_nr, old_delete_to))
    delete_to = SeqNr(max(old_delete_to, min(to, seq_nr)))
    new_head = replace(head, partition_offset=position, seq_nr=seq_nr, delete_to=delete_to)
    update = UpdateHead(
        position,
        now,
        seq_nr=seq_nr if seq_nr != head.seq_nr else None,
        delete_to=delete_to if delete_to != head.delete_to else None,
    )
    first, last = old_delete_to + 1, min(to, head.seq_nr)
    deletes: list[Write] = []
    if first <= last:
        size = head.segment_size
        segments = range(journal_segment(first, size), journal_segment(last, size) + 1)
        whole = last >= head.seq_nr
        for segment in segments:
            partial = not whole and segment == segments[-1]
            deletes.append(DeleteRows(segment, SeqNr(last) if partial else None))
    return Plan(new_head, (tuple(deletes), (update,)))


def plan_purge(
    head: JournalHead | None,
    position: PartitionOffset,
    *,
    dropped: Sequence[SeqRange] = (),
    segment_size: int,
) -> Plan | None:
    """Erase the journal: its segments (one before and one after, as kafka-journal), then its head.

    `dropped` (see `PurgeBatch`) adds the segments of rows a crashed earlier attempt may have
    written for appends this purge folded away; with no head those rows used `segment_size`.
    """
    if head is None:
        if not dropped:
            return None
        return Plan(None, (_delete_segments(dropped, segment_size),))
    if position.offset < head.partition_offset.offset:
        return None
    # Rows ≤ delete_to are already gone (deletes remove rows before moving delete_to).
    first = 1 if head.delete_to is None else min(head.delete_to, head.seq_nr)
    last = max(head.seq_nr, head.delete_to or 0)
    ranges = (SeqRange(SeqNr(first), SeqNr(last)), *dropped)
    return Plan(None, (_delete_segments(ranges, head.segment_size), (DeleteHead(),)))


def _delete_segments(ranges: Iterable[SeqRange], segment_size: int) -> Step:
    """The segments of each range, with one before and one after, each segment once."""
    segments: set[int] = set()
    for seq_nrs in ranges:
        start = max(journal_segment(seq_nrs.from_, segment_size) - 1, 0)
        end = journal_segment(seq_nrs.to, segment_size) + 1
        segments.update(range(start, end + 1))
    return tuple(DeleteRows(segment) for segment in sorted(segments))


def _insert_rows(events: Sequence[EventRecord], head: JournalHead) -> Step:
    by_segment: dict[int, list[EventRecord]] = {}
    for event in events:
        by_segment.setdefault(journal_segment(event.seq_nr, head.segment_size), []).append(event)
    return tuple(
        InsertRows(segment, tuple(rows), head.record_id) for segment, rows in by_segment.items()
    )


def _expiry_change(
    current: Expiry | None, expire_after: ExpireAfter | None, now: datetime, zone: tzinfo
) -> tuple[Expiry | None, bool, bool]:
    """(expiry after the append, whether to write it, whether to remove it)."""
    if expire_after is None:
        return None, False, current is not None
    expiry = Expiry(expire_after, expire_on(expire_after, now, zone))
    return expiry, expiry != current, False


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("replication time must be timezone-aware")
    return value.astimezone(UTC)
