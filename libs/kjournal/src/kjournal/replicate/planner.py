"""Planning one journal's part of a slice (step 3 of `slice.py`), without I/O: a function of the
journal's collected records, its head as loaded and what earlier slices quarantined, that
returns what it decided and changes nothing it is given.

It decides where the journal's quarantine starts (`Cutoff`: an earlier slice's, the first
undecodable header, or the first undecodable payload the head does not cover, whichever comes
first); before that, which appends the append rule drops (`dropped.py`); and the steps that apply
the rest, folded into batches (`kjournal.fold.batch`), each batch planned against the head the
one before it leaves (`kjournal.fold.plan`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import tzinfo

from kjournal.fold.batch import Appends
from kjournal.fold.batch import Batch
from kjournal.fold.batch import DeleteBatch
from kjournal.fold.batch import fold_batches
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import Plan
from kjournal.fold.plan import Step
from kjournal.fold.plan import plan_append
from kjournal.fold.plan import plan_delete
from kjournal.fold.plan import plan_purge
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model.head import JournalHead
from kjournal.replicate.collect import Decoded
from kjournal.replicate.collect import JournalSlice
from kjournal.replicate.collect import decode_payload
from kjournal.replicate.dropped import DroppedAppend
from kjournal.replicate.dropped import taken

__all__ = ["Cutoff", "JournalPlan", "actions_before", "known_cutoff", "plan_journal"]


@dataclass(frozen=True, slots=True)
class Cutoff:
    """A journal's first quarantined offset, and why this slice found the record there bad
    (None: an earlier slice quarantined it)."""

    offset: int
    error: str | None = None


@dataclass(frozen=True, slots=True)
class JournalPlan:
    """What planning decided for one journal."""

    key: Key
    head: JournalHead | None  # as loaded, before this slice
    cutoff: Cutoff | None  # where its quarantine starts (None: it has none)
    steps: tuple[Step, ...] = ()  # what applies its taken actions, in order
    dropped: tuple[DroppedAppend, ...] = ()  # the appends the append rule drops
    batches: int = 0  # batches that change the head
    events: int = 0  # journal rows the steps insert


def known_cutoff(journal: JournalSlice, quarantined_from: int | None) -> Cutoff | None:
    """The cutoff known before any payload is decoded: an earlier slice's (`quarantined_from`)
    or the first bad header's, whichever comes first."""
    poison = journal.poison
    if poison is not None and (quarantined_from is None or poison[0].offset < quarantined_from):
        return Cutoff(poison[0].offset, poison[1])
    return None if quarantined_from is None else Cutoff(quarantined_from)


def actions_before(journal: JournalSlice, cutoff: Cutoff | None) -> list[ActionRecord]:
    return [a for a in journal.decoded if cutoff is None or a.offset < cutoff.offset]


def plan_journal(
    journal: JournalSlice,
    head: JournalHead | None,
    known: Cutoff | None,
    now: datetime,
    *,
    partition: int,
    segment_size: int,
    expiry_zone: tzinfo = UTC,
    new_record_id: Callable[[], uuid.UUID] = uuid.uuid4,
) -> JournalPlan:
    """Plan `journal` against `head` (as loaded), its quarantine starting at `known` or earlier.

    `now`, `segment_size`, `expiry_zone` and `new_record_id` (the id of a head this plan
    creates) are those of `kjournal.fold.plan`.
    """
    covered = -1 if head is None else head.partition_offset.offset
    actions = actions_before(journal, known)
    decoded, bad_payload = _decoded_payloads(actions, covered)
    cutoff = known
    if bad_payload is not None:
        cutoff = bad_payload
        actions = [a for a in actions if a.offset < bad_payload.offset]
    kept, dropped = taken(actions, head, decoded)

    steps: list[Step] = []
    batches = events = 0
    current = head
    for batch in fold_batches(kept):
        if batch.offset <= covered:
            continue  # the head has it (an append's payload was not even decoded)
        position = PartitionOffset(partition, batch.offset)
        plan = _plan_batch(
            batch,
            current,
            position,
            decoded,
            covered,
            now,
            segment_size,
            expiry_zone,
            new_record_id,
        )
        if plan is None:
            continue
        steps += [step for step in plan.steps if step]
        events += sum(len(w.events) for w in plan.writes if isinstance(w, InsertRows))
        batches += plan.head != current
        current = plan.head
    return JournalPlan(journal.key, head, cutoff, tuple(steps), tuple(dropped), batches, events)


def _decoded_payloads(
    actions: Sequence[ActionRecord], covered: int
) -> tuple[dict[int, Decoded], Cutoff | None]:
    """The decoded payloads of the appends after `covered`, by offset, up to the first that
    cannot be decoded (its cutoff, else None).

    Every such append is decoded, even one a later delete folds away, so whether a record is
    poison does not depend on how the partition was sliced."""
    decoded: dict[int, Decoded] = {}
    for action in actions:
        if isinstance(action.action, Append) and action.offset > covered:
            result = decode_payload(action, action.action)
            if isinstance(result, str):
                return decoded, Cutoff(action.offset, result)
            decoded[action.offset] = result
    return decoded, None


def _plan_batch(
    batch: Batch,
    head: JournalHead | None,
    position: PartitionOffset,
    decoded: dict[int, Decoded],
    covered: int,
    now: datetime,
    segment_size: int,
    expiry_zone: tzinfo,
    new_record_id: Callable[[], uuid.UUID],
) -> Plan | None:
    if isinstance(batch, Appends):
        events = [
            event
            for record in batch.records
            if record.offset > covered
            for event in decoded[record.offset].events
        ]
        return plan_append(
            head,
            position,
            now,
            decoded[batch.offset].expire_after,
            events,
            dropped_from=batch.dropped_from,
            segment_size=segment_size,
            new_record_id=new_record_id,
            expiry_zone=expiry_zone,
        )
    if isinstance(batch, DeleteBatch):
        return plan_delete(head, position, now, batch.to, batch.origin, segment_size=segment_size)
    return plan_purge(head, position, dropped=batch.dropped, segment_size=segment_size)
