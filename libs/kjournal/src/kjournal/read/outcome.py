"""The outcome of an append in Kafka: what the append rule made of it, as every reader sees it.

The writer produces an append, then asks for its outcome before it answers (docs/concurrency.md):
201 only for a taken append, a replay's answer for an identical retry, 409 or 412 for the rest.

**From the fold** (the hot path): the partition's fold (read/partition_fold.py) decided the
record's fate when it consumed it; the question waits until the fold has passed the offset and
looks the fate up. A dropped append over seqNrs its journal held is compared with the journal's
events as the append met them (its events, and theirs: from the fold's memory, Kafka or
Cassandra) as soon as the fold meets it, in a task of its own (off the fold's path): identical is
a replay (the answer names the copy readers return), else a refusal (it had a condition) or a
conflict.

**Scanned** (the slow path, `scanned_outcome`): for a record the fold cannot tell (replicated
before the fold knew its journal, before the fold's start, past what it remembers, or while the
fold is rebuilding):

1. pointer2, then the journal as of the append's own offset (head, quarantine, its tail up to and
   including that offset, scanned from Kafka): nothing after the append counts.
2. The tail before the append is folded onto the head (fold/head_info.py), giving the journal the
   append met; the append rule (fold/append_rule.py) takes it or drops it, and a dropped append
   is compared as above.

A journal without a head whose append a purge follows in the log is folded from the log start
instead: replicated between the reads of pointer2 and the head, that purge deleted the head the
append met, and nothing in Cassandra says so. When replication already passed the append
(pointer2 or the head at or beyond its offset), the journal it met is gone from view; then only
the evidence of what readers return now can answer: its events stored at its own offset (taken)
or an identical copy elsewhere (a replay); anything else is OutcomeUnknown, and the writer's
client resends, which is judged afresh and safely.
"""

from __future__ import annotations

import asyncio
import logging

from kjournal.errors import FoldUnavailable
from kjournal.errors import JournalNotFound
from kjournal.errors import JournalQuarantined
from kjournal.errors import OutcomeUnknown
from kjournal.fold.append_rule import Dropped
from kjournal.fold.append_rule import dropped_kind
from kjournal.fold.append_rule import same_content
from kjournal.fold.append_rule import takes
from kjournal.fold.head_info import fold_head_info
from kjournal.metrics.catalogue import FOLD_ANSWERS
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import AppendOutcome
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import Outcome
from kjournal.model import PartitionOffset
from kjournal.model import Purge
from kjournal.read.fates import Fate
from kjournal.read.fates import FateKind
from kjournal.read.fates import Lookup
from kjournal.read.journal_entry import head_of
from kjournal.read.partition_fold import Overlap
from kjournal.read.tail import Tail
from kjournal.read.view import JournalReader
from kjournal.read.view import JournalView
from kjournal.read.view import event_records

__all__ = ["LocalOutcomes", "scanned_outcome"]

log = logging.getLogger(__name__)

_OUTCOMES = {
    Dropped.REPLAY: Outcome.REPLAY,
    Dropped.REFUSED: Outcome.REFUSED,
    Dropped.CONFLICT: Outcome.CONFLICT,
    Dropped.GAP: Outcome.GAP,
}
_FATE_KINDS = {
    Dropped.REPLAY: FateKind.REPLAY,
    Dropped.REFUSED: FateKind.REFUSED,
    Dropped.CONFLICT: FateKind.CONFLICT,
    Dropped.GAP: FateKind.GAP,
}
_ANSWERS = {
    FateKind.TAKEN: Outcome.TAKEN,
    FateKind.REPLAY: Outcome.REPLAY,
    FateKind.REFUSED: Outcome.REFUSED,
    FateKind.CONFLICT: Outcome.CONFLICT,
    FateKind.GAP: Outcome.GAP,
}


class LocalOutcomes:
    """`ports.AppendOutcomes` in process, over a JournalReader: from its follower's folds when
    it has one, scanned otherwise (and for what the folds cannot tell).

    `wait_s`: how long a question waits for the fold before the slow path answers it."""

    def __init__(self, reader: JournalReader, wait_s: float = 5.0) -> None:
        self._reader = reader
        self._wait_s = wait_s
        self._checks: dict[tuple[str, int, int], asyncio.Task[Fate | None]] = {}
        follower = reader.follower
        if follower is not None:
            follower.classify = self._check_overlap

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        reader = self._reader
        follower = reader.follower
        if follower is None:
            return await scanned_outcome(reader, key, offset)
        partition = await reader.partition(key)
        found: Fate | Lookup | None
        try:
            async with asyncio.timeout(self._wait_s):
                found = await follower.fate(key, partition, offset)
                if isinstance(found, Fate) and found.kind is FateKind.OVERLAP:
                    found = await self._compared(key, partition, found)
        except (FoldUnavailable, TimeoutError):
            found = None
        if found is Lookup.NO_RECORD:
            self._answered(key, "fold")
            raise JournalNotFound(
                f"offset {offset} of partition {partition} of topic {key.topic} holds no "
                f"append of journal {key} (or no record yet)"
            )
        if not isinstance(found, Fate) or found.kind in (FateKind.UNKNOWN, FateKind.OVERLAP):
            self._answered(key, "scanned")
            return await scanned_outcome(reader, key, offset)
        self._answered(key, "fold")
        return _answer(key, partition, found)

    def _answered(self, key: Key, result: str) -> None:
        self._reader.metrics.increment(
            FOLD_ANSWERS.name, 1, topic=key.topic, question="outcome", result=result
        )

    def known(self, key: Key, offset: int) -> AppendOutcome | None:
        """The outcome if the fold has decided it already (no wait, no I/O), else None.
        Raises what `outcome` would for a record that is not the journal's append."""
        follower = self._reader.follower
        folds = follower.following(key.topic) if follower is not None else None
        if folds is None:
            return None
        try:
            partition = folds.partition_of(key.id)
            found = folds.fold(partition).fate(offset)
        except FoldUnavailable:
            return None
        if not isinstance(found, Fate) or found.kind in (FateKind.OVERLAP, FateKind.UNKNOWN):
            return None
        return _answer(key, partition, found)

    async def _compared(self, key: Key, partition: int, fate: Fate) -> Fate | None:
        """The fate of a dropped append over seqNrs its journal held, once compared (the first
        question starts the comparison, later ones share it); None when the fold no longer
        holds what the append met (the slow path answers then)."""
        at = (key.topic, partition, fate.offset)
        task = self._checks.get(at)
        if task is None:
            follower = self._reader.follower
            folds = follower.following(key.topic) if follower is not None else None
            if folds is None:
                return None
            overlap = folds.fold(partition).overlap(fate.offset)
            if overlap is None:
                return None if fate.kind is FateKind.OVERLAP else fate
            task = self._start_comparing(key.topic, partition, overlap)
        return await asyncio.shield(task)

    def _check_overlap(self, topic: str, partition: int, overlap: Overlap) -> None:
        """The fold met a dropped append over seqNrs its journal held: compare it now, while
        the fold still holds what it met (replication and a purge after it would take that away,
        and the fate the log fixed with it)."""
        self._start_comparing(topic, partition, overlap)

    def _start_comparing(
        self, topic: str, partition: int, overlap: Overlap
    ) -> asyncio.Task[Fate | None]:
        at = (topic, partition, overlap.fate.offset)
        task = asyncio.get_running_loop().create_task(
            self._compare_overlap(Key(topic, overlap.fate.id), partition, overlap)
        )
        self._checks[at] = task

        def done(_: asyncio.Task[Fate | None]) -> None:
            self._checks.pop(at, None)
            overlap.entry_fold.compared(overlap.fate.offset)

        task.add_done_callback(done)
        return task

    async def _compare_overlap(self, key: Key, partition: int, overlap: Overlap) -> Fate | None:
        reader = self._reader
        fate, record = overlap.fate, overlap.record
        append = record.action
        assert isinstance(append, Append)
        met = overlap.before()
        if met is None:
            return None
        before, info = met
        candidate = await _events_of(reader, key, partition, record)
        entry = overlap.entry
        if overlap.base.seq_nr is not None:
            await reader.know_meta(key, partition, entry)
        head = head_of(overlap.base, entry.meta, partition)
        view = JournalView(
            key,
            partition,
            fate.offset,
            before.start - 1,
            head,
            before,
            info,
            rows_before=fate.offset,
        )
        identical, kept = await _compare(reader, view, candidate)
        header = append.header
        fate.kind = _FATE_KINDS[
            dropped_kind(identical, header.expect, header.range.from_, fate.seq_nr)
        ]
        if fate.kind is FateKind.REPLAY and kept is not None:
            fate.copy = (kept.partition_offset.offset, kept.timestamp)
        return fate


def _answer(key: Key, partition: int, fate: Fate) -> AppendOutcome:
    """The writer's answer for a decided fate."""
    if fate.id != key.id:
        raise JournalNotFound(f"offset {fate.offset} holds no record of journal {key}")
    if fate.kind is FateKind.PARKED:
        assert fate.quarantined_at is not None
        raise JournalQuarantined(
            key.topic, key.id, partition, fate.quarantined_at, fate.reason or "quarantined"
        )
    if fate.kind not in _ANSWERS:
        raise JournalNotFound(f"offset {fate.offset} holds no append of journal {key}")
    position, timestamp = PartitionOffset(partition, fate.offset), fate.timestamp
    if fate.copy is not None:
        position, timestamp = PartitionOffset(partition, fate.copy[0]), fate.copy[1]
    return AppendOutcome(_ANSWERS[fate.kind], fate.seq_nr, position, timestamp, fate.expect)


async def scanned_outcome(reader: JournalReader, key: Key, offset: int) -> AppendOutcome:
    """The outcome of the append of journal `key` at `offset` of its partition, worked out from
    Cassandra and a scan of Kafka (see the module docstring).

    JournalNotFound if that record is not an append of this journal (or not there yet); OutcomeUnknown if replication
    passed it and what readers return now does not tell (see the module docstring).
    """
    partition = await reader.partition(key)
    # The end first: an offset past it holds nothing yet, and waiting for the tail to reach it
    # would hold the request for the tail's whole wait (a writer asks only once Kafka has its
    # record, so its offsets are always below the end).
    end, pointer2 = await asyncio.gather(
        reader.end_offset(key, partition), reader.pointer2(key, partition)
    )
    if offset >= end:
        raise JournalNotFound(
            f"offset {offset} of partition {partition} of topic {key.topic} holds no record yet "
            f"(the partition ends at {end})"
        )
    if pointer2 is not None and pointer2 >= offset:
        return await _from_evidence(reader, key, partition, offset)
    view = await reader.view_at(key, partition, offset + 1, pointer2)
    if view.head is not None and view.head.partition_offset.offset >= offset:
        return await _from_evidence(reader, key, partition, offset)
    if view.head is None and await _purged_after(reader, key, partition, offset, end):
        view = await _from_log_start(reader, key, partition, offset)
    actions = view.tail.actions
    record = actions[-1] if actions and actions[-1].offset == offset else None
    append = _the_append(key, offset, record)
    assert record is not None
    before = _before(view, offset)
    header = append.header
    met = before.info.seq_nr
    if takes(met, header.range.from_, header.expect):
        return AppendOutcome(
            Outcome.TAKEN, header.range.to, record.partition_offset, append.timestamp, header.expect
        )
    identical, kept = False, None
    if met is not None and header.range.to <= met:
        candidate = await _events_of(reader, key, partition, record)
        identical, kept = await _compare(reader, before, candidate)
    kind = _OUTCOMES[dropped_kind(identical, header.expect, header.range.from_, met)]
    position, timestamp = record.partition_offset, append.timestamp
    if kind is Outcome.REPLAY and kept is not None:
        position, timestamp = kept.partition_offset, kept.timestamp
    return AppendOutcome(kind, met or 0, position, timestamp, header.expect)


async def _purged_after(
    reader: JournalReader, key: Key, partition: int, offset: int, end: int
) -> bool:
    """Whether a purge of the journal follows its append at `offset` in the log, below `end`.
    Replicated after pointer2 was read and before the head was, it deleted the head the append
    met, and a deleted head leaves no offset behind: folded onto nothing, the append would meet
    a journal that does not exist (a conflict "taken"). `end` was read with pointer2, before
    the head: a purge above it was produced after that, and replicated before the head was read
    only if the reader stalled between its reads for longer than the replicator takes to
    replicate a new record (docs/concurrency.md). Reading the end again here would close that
    too, for a Kafka round trip on every outcome of an unreplicated journal."""
    if end <= offset + 1:
        return False
    later = await reader.tail(key, partition, offset + 1, end)
    return any(isinstance(record.action, Purge) for record in later.actions)


async def _from_log_start(
    reader: JournalReader, key: Key, partition: int, offset: int
) -> JournalView:
    """The journal up to its append at `offset`, folded from the partition's log start alone
    (Cassandra not asked): exact while Kafka still holds the journal's history since it was
    created or last purged, as the topic feed's lookups are (feed/states.py). Only an append
    that a purge follows closely pays this scan."""
    actions = tuple([record async for record in reader.actions(key, partition, 0, offset + 1)])
    info = fold_head_info(None, actions)
    return JournalView(key, partition, offset + 1, None, None, Tail(0, offset + 1, actions), info)


def _the_append(key: Key, offset: int, record: ActionRecord | None) -> Append:
    if record is None or not isinstance(record.action, Append):
        raise JournalNotFound(f"offset {offset} holds no append of journal {key}")
    return record.action


def _before(view: JournalView, offset: int) -> JournalView:
    """`view` without the action at `offset`: the journal as that action met it."""
    tail = view.tail
    payloads_from = tail.payloads_from
    before = Tail(
        tail.start,
        offset,
        tail.actions[:-1],
        payloads_from if payloads_from is not None and payloads_from < offset else None,
    )
    info = fold_head_info(view.head, before.actions)
    return JournalView(view.key, view.partition, offset, view.pointer2, view.head, before, info)


async def _events_of(
    reader: JournalReader, key: Key, partition: int, record: ActionRecord
) -> tuple[EventRecord, ...]:
    """The append's events (its payload read from Kafka again if the tail kept only headers)."""
    action = record.action
    assert isinstance(action, Append)
    if not action.payload:
        async for found in reader.actions(key, partition, record.offset, record.offset + 1):
            action = found.action
        assert isinstance(action, Append)
    return event_records(action, partition, record.offset)


async def _compare(
    reader: JournalReader, view: JournalView, candidate: tuple[EventRecord, ...]
) -> tuple[bool, EventRecord | None]:
    """Whether each candidate event equals what a read of `view` returns for its seqNr (a seqNr
    the read does not return, deleted or never written, is not equal: a 2xx is never answered
    for events no reader returns), and the kept copy of the last one."""
    kept = await _kept(reader, view, candidate)
    last = candidate[-1].seq_nr
    identical = all(
        event.seq_nr in kept and same_content(event, kept[event.seq_nr]) for event in candidate
    )
    return identical, kept.get(last)


async def _kept(
    reader: JournalReader, view: JournalView, candidate: tuple[EventRecord, ...]
) -> dict[int, EventRecord]:
    """What a read of `view` returns for the candidate's seqNrs, by seqNr."""
    first, last = candidate[0].seq_nr, candidate[-1].seq_nr
    return {event.seq_nr: event async for event in reader.events(view, first, last)}


async def _from_evidence(
    reader: JournalReader, key: Key, partition: int, offset: int
) -> AppendOutcome:
    """Replication passed the append: answer from what a read returns now, if it tells."""
    record: ActionRecord | None = None
    async for found in reader.actions(key, partition, offset, offset + 1):
        record = found
    append = _the_append(key, offset, record)
    assert record is not None
    candidate = event_records(append, partition, offset)
    view = await reader.view(key)
    kept = await _kept(reader, view, candidate)
    last = candidate[-1].seq_nr
    if len(kept) == len(candidate) and all(
        same_content(event, kept[event.seq_nr]) for event in candidate
    ):
        copy = kept[last]
        own = all(event.partition_offset.offset == offset for event in kept.values())
        seq_nr = int(view.info.seq_nr or last)
        if own:  # the journal's seqNr after this append, as on the tail path: not later events'
            return AppendOutcome(
                Outcome.TAKEN, last, PartitionOffset(partition, offset), append.timestamp
            )
        return AppendOutcome(Outcome.REPLAY, seq_nr, copy.partition_offset, copy.timestamp)
    raise OutcomeUnknown(
        f"the append of journal {key} at offset {offset} was replicated before its outcome was "
        "asked, and what readers return now does not tell it: resend the same append (it is "
        "answered as a replay if the first copy was taken)"
    )
