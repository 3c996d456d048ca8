"""Reading a journal: Cassandra merged with the unreplicated tail of its Kafka partition.

1. In parallel: the partition's end offset (no marker is written) and pointer2; then the journal's
   head and quarantine flag from Cassandra (after pointer2, so the head is never older than it).
2. pointer2 ≥ end − 1: everything is in Cassandra.
3. Otherwise the tail (offsets pointer2+1 … end−1) of this journal, from the tail cache or a scan
   that compares record keys before parsing anything, is folded into HeadInfo before the first
   event is emitted, so deletes and purges still only in Kafka are honoured.
4. Cassandra's events from max(from, deleteTo+1), then the tail's, skipping the appends the
   append rule drops (fold/append_rule.py), as the replicator drops them, so a read returns the
   same before and after replication.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TypeVar

from opentelemetry.trace import Span

from kjournal.errors import FoldUnavailable
from kjournal.errors import JournalQuarantined
from kjournal.errors import TopicRepartitioned
from kjournal.fold.head_info import HeadInfo
from kjournal.fold.head_info import fold_head_info
from kjournal.metrics import NOOP_METRICS
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import FOLD_ANSWERS
from kjournal.metrics.catalogue import READ_PAYLOADS_DECODED
from kjournal.metrics.catalogue import READ_PHASE_SECONDS
from kjournal.model import SEQ_NR_MAX
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead
from kjournal.model.replication import replication_lag
from kjournal.ports import EventualReader
from kjournal.read.follower import Follower
from kjournal.read.journal_entry import HeadMeta
from kjournal.read.journal_entry import JournalEntry
from kjournal.read.tail import JournalPartitions
from kjournal.read.tail import Tail
from kjournal.read.tail import TailScanner
from kjournal.spans import conventions as sem
from kjournal.spans import span
from kjournal.wire.append_events import decode_append

T = TypeVar("T")


PHASE_SECONDS = READ_PHASE_SECONDS.name
"""How long each step of a read's start took (`phase`: end_offset, pointer2, head, tail)."""


@dataclass(frozen=True, slots=True)
class JournalView:
    """A journal as a read sees it when it starts: where its partition ends, what Cassandra holds
    (pointer2, head), its unreplicated tail, and the two folded together (info)."""

    key: Key
    partition: int
    end_offset: int
    pointer2: int | None
    head: JournalHead | None
    tail: Tail
    info: HeadInfo
    # Cassandra's rows of records at or past this offset are not part of the view (a fold's
    # view: the replicator may have written records the fold has not consumed yet); None: all.
    rows_before: int | None = None

    @property
    def unreplicated_offsets(self) -> int:
        """The partition's records not replicated yet, counted from offset 0 (replication_status)."""
        return replication_lag(0, self.end_offset, self.pointer2)


def _pending(tail_span: Span, head: JournalHead | None, tail: Tail, info: HeadInfo) -> None:
    """The tail's extent on its span, and a delete or purge it holds as an event."""
    tail_span.set_attribute(sem.TAIL_ACTIONS, info.actions)
    tail_span.set_attribute(sem.TAIL_OFFSETS, tail.end - tail.start)
    if info.purged_at is not None:
        tail_span.add_event("pending purge", {sem.MESSAGING_KAFKA_OFFSET: info.purged_at})
    before = head.delete_to if head is not None else None
    if info.delete_to is not None and info.delete_to != before and info.purged_at is None:
        tail_span.add_event("pending delete", {sem.DELETE_TO: int(info.delete_to)})


def event_records(append: Append, partition: int, offset: int) -> tuple[EventRecord, ...]:
    """An Append record's events (FormatError if its payload does not decode)."""
    return decode_append(append, PartitionOffset(partition, offset)).events


@dataclass(frozen=True, slots=True)
class JournalReader:
    """Journal views and their events. With a `follower`, a view is its partition's fold's
    knowledge of the journal (no Cassandra or Kafka read but the partition's end offset, shared
    by concurrent reads); without one, or when the fold cannot answer in time
    (`fold_wait_s`), Cassandra's head and the tail scanned from Kafka (`view_at`)."""

    eventual: EventualReader
    offsets: JournalPartitions
    scanner: TailScanner
    follower: Follower | None = None
    metrics: Metrics = NOOP_METRICS
    fold_wait_s: float = 1.0

    def _answered(self, key: Key, result: str) -> None:
        self.metrics.increment(
            FOLD_ANSWERS.name, 1, topic=key.topic, question="view", result=result
        )

    async def _phase(self, name: str, step: Awaitable[T], key: Key, partition: int) -> T:
        """`step` awaited in a span named `name`, its time observed as the phase's."""
        started = time.perf_counter()
        with span(name, attributes={sem.TOPIC: key.topic, sem.PARTITION: partition}):
            result = await step
        self.metrics.observe(
            PHASE_SECONDS, time.perf_counter() - started, phase=name.replace(" ", "_")
        )
        return result

    async def partition(self, key: Key) -> int:
        """The partition the journal lives in."""
        return await self.offsets.partition(key)

    async def end_offset(self, key: Key, partition: int) -> int:
        """Where the journal's partition ends now (the offset its next record gets)."""
        return await self._phase(
            sem.SPAN_END_OFFSET, self.offsets.end_offset(key.topic, partition), key, partition
        )

    async def view(self, key: Key, rows: bool = True, fresh: bool = False) -> JournalView:
        """The journal as a read starting now sees it: every record acknowledged before the
        call is in it. `rows` False: the caller reads no events (a pointer), so the view's head
        may be left out where only Cassandra's rows need it. `fresh`: what is replicated is
        read now (a status), not as the fold last read it."""
        partition = await self.offsets.partition(key)
        if self.follower is not None and fresh:
            pointer2 = await self.pointer2(key, partition)
            if pointer2 is not None:
                self.follower.replicated(key.topic, partition, pointer2)
        if self.follower is not None:
            try:
                async with asyncio.timeout(self.fold_wait_s):
                    view = await self._folded_view(self.follower, key, partition, rows)
                self._answered(key, "fold")
                return view
            except (FoldUnavailable, TimeoutError):
                self._answered(key, "scanned")  # rebuilding or far behind: read as it would
        end, pointer2 = await asyncio.gather(
            self.end_offset(key, partition), self.pointer2(key, partition)
        )
        return await self.view_at(key, partition, end, pointer2)

    async def _folded_view(
        self, follower: Follower, key: Key, partition: int, rows: bool
    ) -> JournalView:
        end = await self._phase(
            sem.SPAN_END_OFFSET, follower.ends.end(key.topic, partition), key, partition
        )
        fold, entry = await follower.entry(key, partition, end - 1)
        if entry.error is not None:
            raise entry.error
        if entry.quarantined_at is not None:
            raise JournalQuarantined(
                key.topic, key.id, partition, entry.quarantined_at, entry.quarantine_reason or ""
            )
        tail = fold.view_tail(entry)
        info = fold.head_info(entry.base, tail)
        base = entry.base
        if rows and base.seq_nr is not None and base.seq_nr > (base.delete_to or 0):
            await self.know_meta(key, partition, entry)
        head = entry.head(partition) if entry.meta is not None else None
        pointer2 = fold.replicated if fold.replicated >= 0 else None
        end = fold.position + 1
        return JournalView(key, partition, end, pointer2, head, tail, info, rows_before=end)

    async def know_meta(self, key: Key, partition: int, entry: JournalEntry) -> None:
        """Read what Cassandra's rows need of the journal's head, once per incarnation."""
        if entry.meta is not None:
            return
        head = await self._phase(sem.SPAN_HEAD, self.eventual.head(key), key, partition)
        if head is None or head.partition_offset.partition != partition:
            raise FoldUnavailable(f"Cassandra holds no head of {key} where its fold expects one")
        entry.meta = HeadMeta(head.segment_size, head.record_id)

    async def pointer2(self, key: Key, partition: int) -> int | None:
        """The partition's pointer2 (what Cassandra holds of it)."""
        return await self._phase(
            sem.SPAN_POINTER2, self.eventual.pointer2(key.topic, partition), key, partition
        )

    async def view_at(
        self,
        key: Key,
        partition: int,
        end: int,
        pointer2: int | None,
        check_quarantine: bool = True,
        scan_slots: asyncio.Semaphore | None = None,
    ) -> JournalView:
        """The journal as of offset `end` (exclusive) of its partition, `pointer2` read first.
        JournalQuarantined if a record of it is quarantined, unless not `check_quarantine` (the
        topic feed, feed/states.py, asks for the journal before its quarantined record).
        `scan_slots`: held while the tail is scanned from Kafka (a pooled consumer), if it is."""
        started = time.perf_counter()
        with span(sem.SPAN_HEAD, attributes={sem.JOURNAL_ID: key.id}):
            head, quarantined = await asyncio.gather(
                self.eventual.head(key), self.eventual.quarantined(key)
            )
        self.metrics.observe(PHASE_SECONDS, time.perf_counter() - started, phase="head")
        if head is not None and head.partition_offset.partition != partition:
            raise TopicRepartitioned(key.topic, key.id, head.partition_offset.partition, partition)
        if quarantined is not None and check_quarantine:
            raise JournalQuarantined(
                key.topic, key.id, quarantined.partition, quarantined.offset, quarantined.reason
            )
        start = 0 if pointer2 is None else pointer2 + 1
        if start >= end:
            tail = Tail(start, end)
            info = fold_head_info(head, tail.actions)
        else:
            started = time.perf_counter()
            with span(sem.SPAN_TAIL, attributes={sem.PARTITION: partition}) as tail_span:
                tail = await self._tail(key, partition, start, end, scan_slots)
                info = fold_head_info(head, tail.actions)
                if tail_span is not None:
                    _pending(tail_span, head, tail, info)
            self.metrics.observe(PHASE_SECONDS, time.perf_counter() - started, phase="tail")
        return JournalView(key, partition, end, pointer2, head, tail, info)

    def actions(
        self, key: Key, partition: int, start: int, end: int
    ) -> AsyncIterator[ActionRecord]:
        """The journal's actions at offsets [start, end), read from Kafka, payloads included."""
        return self.scanner.actions(key, partition, start, end)

    async def tail(self, key: Key, partition: int, start: int, end: int) -> Tail:
        """The journal's actions at offsets [start, end): from the tail cache, else Kafka."""
        return await self._tail(key, partition, start, end)

    async def _tail(
        self,
        key: Key,
        partition: int,
        start: int,
        end: int,
        scan_slots: asyncio.Semaphore | None = None,
    ) -> Tail:
        if scan_slots is None:
            return await self.scanner.tail(key, partition, start, end)
        async with scan_slots:
            return await self.scanner.tail(key, partition, start, end)

    async def read(
        self, key: Key, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        view = await self.view(key)
        async for record in self.events(view, from_, to, limit):
            yield record

    async def events(
        self, view: JournalView, from_: int = 1, to: int = SEQ_NR_MAX, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        """The events of `view`'s journal with from_ ≤ seqNr ≤ to, at most `limit` of them."""
        info = view.info
        start = max(from_, info.hide_to + 1)
        if start > to or (limit is not None and limit <= 0) or not info.exists:
            return
        last = start - 1
        emitted = 0
        if view.head is not None and info.purged_at is None:
            stored = self.eventual.events(view.key, view.head, SeqNr(start))
            async with aclosing(stored):  # returning early releases the open page request now
                async for record in stored:
                    seq_nr = record.seq_nr
                    if seq_nr > to:
                        return
                    if (
                        view.rows_before is not None
                        and record.partition_offset.offset >= view.rows_before
                    ):
                        continue
                    if seq_nr <= last:
                        continue
                    yield record
                    last = seq_nr
                    emitted += 1
                    if limit is not None and emitted >= limit:
                        return
            # The tail continues after the highest seqNr the journal had: its events at or
            # below that are duplicates (docs/replication.md §4), whatever Cassandra returned.
            last = max(last, view.head.seq_nr)
        async for record in self._tail_events(view, last + 1, to):
            if record.seq_nr <= last:
                continue
            yield record
            last = record.seq_nr
            emitted += 1
            if limit is not None and emitted >= limit:
                return

    async def _tail_events(
        self, view: JournalView, start: int, to: int
    ) -> AsyncIterator[EventRecord]:
        # The head may be newer than pointer2 (replication landed between the two reads): the
        # tail's actions it already holds are Cassandra's, as fold_head_info skips them too.
        covered = -1 if view.head is None else view.head.partition_offset.offset
        purged_at = view.info.purged_at
        after = covered if purged_at is None else max(covered, purged_at)
        refetch_from = view.tail.payloads_from
        dropped = frozenset(view.info.dropped)
        for action_record in view.tail.actions:
            action = action_record.action
            offset = action_record.offset
            if not isinstance(action, Append) or offset <= after or offset in dropped:
                continue
            if action.header.range.to < start:
                continue  # skipped before its payload is decoded
            if action.header.range.from_ > to:
                return
            if refetch_from is not None and offset >= refetch_from:
                async for record in self._refetched_events(view, offset, start, to, dropped):
                    yield record
                return
            self.metrics.increment(READ_PAYLOADS_DECODED.name, 1, topic=view.key.topic)
            for record in event_records(action, view.partition, offset):
                if start <= record.seq_nr <= to:
                    yield record

    async def _refetched_events(
        self, view: JournalView, offset: int, start: int, to: int, dropped: frozenset[int]
    ) -> AsyncIterator[EventRecord]:
        async for action_record in self.scanner.actions(
            view.key, view.partition, offset, view.tail.end
        ):
            append = action_record.action
            if not isinstance(append, Append) or action_record.offset in dropped:
                continue
            if append.header.range.to < start:
                continue
            if append.header.range.from_ > to:
                return
            self.metrics.increment(READ_PAYLOADS_DECODED.name, 1, topic=view.key.topic)
            for record in event_records(append, view.partition, action_record.offset):
                if start <= record.seq_nr <= to:
                    yield record
