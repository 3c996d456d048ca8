"""Journal states for judging a feed's appends: a bounded LRU, and where a missing state comes from.

The feed judges each append with the journal's append rule (fold/append_rule.py), so it needs
the journal's state (HeadInfo) as of the record. States of journals met since the feed started a
partition are folded as the records pass; an LRU per partition keeps at most `capacity` of them
(the subscriber's budget, shared between the partitions a live tail reads at once).
A journal not in it is resolved from what journal reads use (read.py):

* not met since the partition's start position S and nothing was ever evicted: its state at S;
  offset 0 needs no lookup (no journal exists before the first record);
* otherwise its state just before the record's offset o.

The state of journal J at offset P (exclusive) is `JournalReader.view_at(J, P)` (Cassandra's head
folded with J's Kafka records from pointer2 + 1 up to P) when replication has not passed P for J.
When it has (J's head was written at or after P, or J has no head and pointer2 ≥ P, or J has no
head and a purge of J at or after P, which the replicator may have applied after pointer2 was
read), Cassandra holds a newer state than P's, so J's records from the partition's log start up
to P are folded from nothing instead: exact while Kafka still holds J's history since it was
created or last purged, which retention may have removed (docs/feed.md).

Each lookup costs a Cassandra head read and a Kafka scan of the partition from pointer2 (or the
log start) up to P, comparing keys only, and for a journal without a head one more from P to the
partition's end; a state takes a few hundred bytes with its id.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field

from kjournal.errors import FormatError
from kjournal.errors import JournalQuarantined
from kjournal.fold.head_info import HeadInfo
from kjournal.lru import used
from kjournal.model import ActionRecord
from kjournal.model import Key
from kjournal.model import Purge
from kjournal.read import JournalReader

__all__ = ["DEFAULT_CAPACITY", "JournalState", "JournalStates", "StateResolver"]

DEFAULT_CAPACITY = 10_000


@dataclass(frozen=True, slots=True)
class JournalState:
    """What judging needs of a journal: its head as folded so far, or that it is quarantined
    (a record of it could not be decoded: its later records are parked, as the replicator
    parks them, and its reads fail)."""

    info: HeadInfo = field(default_factory=HeadInfo)
    quarantined_at: int | None = None

    @classmethod
    def of(cls, info: HeadInfo) -> JournalState:
        # Only the head matters here: not the counts and dropped offsets the read side keeps.
        return cls(HeadInfo(info.seq_nr, info.delete_to, info.hide_to))

    def apply(self, record: ActionRecord) -> JournalState:
        """The state after `record` (the append rule decides whether an append counts)."""
        return JournalState.of(self.info.apply(record))


class JournalStates:
    """At most `capacity` journal states of one partition, least recently used evicted first."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("a feed keeps at least one journal state per partition")
        self.capacity = capacity
        self.evicted = False  # once true, a journal not here may have been met before
        self._states: OrderedDict[str, JournalState] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, id_: object) -> bool:
        return id_ in self._states  # without touching the order, unlike get

    def get(self, id_: str) -> JournalState | None:
        return used(self._states, id_)

    def discard(self, id_: str) -> None:
        """Forget a journal's state (the reader's fold judges its records now)."""
        self._states.pop(id_, None)

    def put(self, id_: str, state: JournalState) -> None:
        self._states[id_] = state
        self._states.move_to_end(id_)
        if len(self._states) > self.capacity:
            self._states.popitem(last=False)
            self.evicted = True


class StateResolver:
    """A journal's state as of an offset of its partition, from Cassandra and Kafka."""

    def __init__(self, reader: JournalReader) -> None:
        self._reader = reader

    async def state_at(
        self,
        key: Key,
        partition: int,
        at: int,
        log_start: int,
        scan_slots: asyncio.Semaphore | None = None,
    ) -> JournalState:
        """The journal's state before offset `at` (see the module docstring). `scan_slots`: held
        while Kafka is scanned with a pooled consumer (the tail cache does not cover the tail)."""
        if at <= 0:
            return JournalState()
        reader = self._reader
        pointer2 = await reader.pointer2(key, partition)
        try:
            try:
                view = await reader.view_at(key, partition, at, pointer2, scan_slots=scan_slots)
            except JournalQuarantined as exc:
                if exc.offset < at:
                    return JournalState(quarantined_at=exc.offset)
                view = await reader.view_at(
                    key, partition, at, pointer2, check_quarantine=False, scan_slots=scan_slots
                )
        except FormatError:
            return JournalState(quarantined_at=at - 1)  # its tail before `at` does not decode
        head = view.head
        if head is None:
            passed = pointer2 is not None and pointer2 >= at
        else:
            passed = head.partition_offset.offset >= at
        async with scan_slots or contextlib.nullcontext():
            if head is None and not passed:
                passed = await _purge_replicated_since(reader, key, partition, at)
            if not passed:
                return JournalState.of(view.info)
            return await _fold_from(reader.actions(key, partition, log_start, at), at)


async def _purge_replicated_since(reader: JournalReader, key: Key, partition: int, at: int) -> bool:
    """Whether the journal has a purge at or after offset `at` that the replicator may have
    applied before its head was read (the partition's end is asked after that): then no head
    may be that purge's doing, not a journal empty before `at`."""
    end = await reader.end_offset(key, partition)
    async for record in reader.actions(key, partition, at, end):
        if isinstance(record.action, Purge):
            return True
    return False


async def _fold_from(records: AsyncIterator[ActionRecord], at: int) -> JournalState:
    """The state `records` (a journal's, from nothing up to offset `at`) fold to."""
    state = JournalState()
    try:
        async for record in records:
            state = state.apply(record)
    except FormatError:
        return JournalState(quarantined_at=at - 1)
    return state
