"""The follower: one fold per partition of each journal topic a reader is asked about, fed by one
consumer per topic, with the I/O the folds need (Cassandra heads, pointer2, end offsets).

A topic is followed from its first question on: its partitions' pointer2 are read and each
partition's fold (read/partition_fold.py) starts right after it, so everything not replicated is
folded. A second loop reads pointer2 now and then, which lets the folds drop what Cassandra holds.
A journal a fold meets for the first time is started from Cassandra in rounds (several journals of
a partition at once, read/bootstrap.py), unless the topic's journals, listed from Cassandra once
the folds start, show it cannot exist (read/known.py): then it starts empty at once. Questions wait for the fold to pass their offset, then
are lookups. A consumer failure (or Cassandra's, while the folds start) rebuilds the topic's folds
from pointer2: questions asked meanwhile wait, then are told the fold is unavailable. Cassandra
down while the folds run only holds up the starts of journals they do not know yet. A topic not
asked about for `idle_expiry_s` is no longer followed.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import random
import time
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Protocol

from kjournal.aio import AsyncResource
from kjournal.aio import cancel_and_wait
from kjournal.errors import DeadlineExceeded
from kjournal.errors import FoldUnavailable
from kjournal.errors import PartitionCountChanged
from kjournal.errors import Unavailable
from kjournal.metrics import Metrics
from kjournal.metrics import NoopMetrics
from kjournal.metrics.catalogue import FOLD_FAILURES
from kjournal.metrics.catalogue import FOLD_LISTINGS
from kjournal.metrics.catalogue import FOLD_NEW_STARTS
from kjournal.metrics.catalogue import FOLD_STARTS
from kjournal.model import ActionRecord
from kjournal.model import Key
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.ports import EventualReader
from kjournal.ports import PartitionRecords
from kjournal.read.bootstrap import start_of
from kjournal.read.fates import Fate
from kjournal.read.fates import Lookup
from kjournal.read.journal_entry import JournalEntry
from kjournal.read.known import KnownJournals
from kjournal.read.partition_fold import Overlap
from kjournal.read.partition_fold import PartitionFold
from kjournal.read.partition_fold import PayloadBudget
from kjournal.read.records import Poison
from kjournal.read.records import decoded
from kjournal.read.settings import FoldSettings
from kjournal.spans import untraced
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import ConsumedRecord

__all__ = [
    "Follower",
    "PartitionBatch",
    "TopicStream",
]

log = logging.getLogger(__name__)

_PARTITION_CHECK_INTERVAL_S = 5.0
_BACKOFF_MIN_S = 0.01
_BACKOFF_MAX_S = 1.0
_LISTING_BACKOFF_MIN_S = 1.0
_LISTING_BACKOFF_MAX_S = 60.0
_STARTS_PER_ROUND = 64  # journals of one partition started together
_ROUNDS_AT_ONCE = 4  # rounds of one partition in flight
_HEADS_AT_ONCE = 32  # Cassandra head reads in flight per round


@dataclass(frozen=True, slots=True)
class PartitionBatch:
    """One poll's records of one partition, and the offset the consumer reads next."""

    partition: int
    records: list[ConsumedRecord]
    next_offset: int


class TopicStream(Protocol):
    """Every record of a topic's partitions from the given offsets on (kafka/topic_stream.py)."""

    def follow(
        self, topic: str, starts: Mapping[int, int]
    ) -> AsyncGenerator[list[PartitionBatch], None]: ...


class PartitionSource(PartitionRecords, Protocol):
    """What the follower asks Kafka besides the stream (kafka/tail_scanner.py)."""

    async def partition_count(self, topic: str) -> int: ...

    async def end_offsets(self, topic: str, partitions: Sequence[int]) -> dict[int, int]: ...


class EndOffsets:
    """Partition end offsets, each asked after the call that wants it (so an answer is never
    older than the question) and shared by the calls made in the same turn of the event loop."""

    def __init__(self, fetch: Callable[[str, Sequence[int]], Awaitable[dict[int, int]]]) -> None:
        self._fetch = fetch
        self._next: dict[str, tuple[set[int], asyncio.Future[dict[int, int]]]] = {}
        self._sending: set[asyncio.Task[None]] = set()

    async def end(self, topic: str, partition: int) -> int:
        gathering = self._next.get(topic)
        if gathering is None:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[dict[int, int]] = loop.create_future()
            future.add_done_callback(_retrieve)
            gathering = self._next[topic] = (set(), future)
            loop.call_soon(self._send, topic)
        partitions, future = gathering
        partitions.add(partition)
        return (await asyncio.shield(future))[partition]

    def _send(self, topic: str) -> None:
        partitions, future = self._next.pop(topic)

        async def fetch() -> None:
            try:
                future.set_result(await self._fetch(topic, sorted(partitions)))
            except Exception as exc:
                future.set_exception(exc)

        with untraced():
            task = asyncio.get_running_loop().create_task(fetch())
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)


def _retrieve(future: asyncio.Future[dict[int, int]]) -> None:
    """Mark an error as seen: every caller may have been cancelled before it came."""
    if not future.cancelled():
        future.exception()


class _TopicFolds:
    """The folds of one topic's partitions, the consumer feeding them, and their waiters."""

    def __init__(self, topic: str, owner: Follower) -> None:
        self.topic = topic
        self._owner = owner
        self.folds: dict[int, PartitionFold] = {}
        self.last_used = time.monotonic()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._positions: dict[int, list[tuple[int, int, asyncio.Future[None]]]] = {}
        self._starting: dict[tuple[int, str], asyncio.Future[None]] = {}
        self._start_wanted: dict[int, asyncio.Event] = {}
        self._counter = itertools.count()
        self.generation = 0

    def start(self) -> None:
        with untraced():  # started by a question, but not part of it
            self._task = asyncio.create_task(self._run(), name=f"kjournal-fold-{self.topic}")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._reset(FoldUnavailable(f"topic {self.topic} is no longer followed"))

    async def ready(self) -> None:
        await self._ready.wait()

    def partition_of(self, id_: str) -> int:
        """The partition of journal `id_` among those followed (FoldUnavailable until ready)."""
        if not self._ready.is_set():
            raise FoldUnavailable(f"the fold of topic {self.topic} is not ready")
        return partition_for(id_.encode(), len(self.folds))

    def decided(self, partition: int, offset: int) -> Fate | Lookup | None:
        """What the partition's fold can tell of the record at `offset` now, without waiting
        (None: the fold is not ready)."""
        fold = self.folds.get(partition) if self._ready.is_set() else None
        return None if fold is None else fold.fate(offset)

    def fold(self, partition: int) -> PartitionFold:
        fold = self.folds.get(partition) if self._ready.is_set() else None
        if fold is None:
            raise FoldUnavailable(f"the fold of topic {self.topic} is not ready")
        return fold

    async def passed(self, partition: int, offset: int) -> PartitionFold:
        """The partition's fold once it has consumed `offset` (FoldUnavailable if the folds are
        rebuilt meanwhile)."""
        fold = self.fold(partition)
        if fold.position >= offset:
            return fold
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(
            self._positions.setdefault(partition, []), (offset, next(self._counter), future)
        )
        await future
        return self.fold(partition)

    async def started(self, partition: int, id_: str) -> JournalEntry:
        """The journal's entry, started from Cassandra first if the fold does not know it."""
        fold = self.fold(partition)
        entry = fold.entry(id_)
        if entry is not None:
            return entry
        if fold.want(id_):
            self._want_start(partition)
        self._count_new_starts(fold)
        await self.wait_started(partition, id_)
        entry = self.fold(partition).entry(id_)
        if entry is None:  # evicted at once by a burst of new journals
            raise FoldUnavailable(f"journal {id_} of {self.topic}:{partition} was evicted")
        return entry

    async def wait_started(self, partition: int, id_: str) -> None:
        """Until the fold knows the journal (it is pending now, or nothing happens)."""
        if id_ not in self.fold(partition).pending:
            return
        key = (partition, id_)
        future = self._starting.get(key)
        if future is None:
            future = self._starting[key] = asyncio.get_running_loop().create_future()
        await asyncio.shield(future)

    # Following

    def _reset(self, error: Exception) -> None:
        self._ready.clear()
        self.generation += 1
        for fold in self.folds.values():
            fold.forget()
        self.folds = {}
        for waiters in self._positions.values():
            for _, _, future in waiters:
                if not future.done():
                    future.set_exception(error)
        self._positions = {}
        for future in self._starting.values():
            if not future.done():
                future.set_exception(error)
        self._starting = {}

    async def _run(self) -> None:
        backoff = _BACKOFF_MIN_S
        while True:
            started = time.monotonic()
            try:
                await self._follow()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._owner.metrics.increment(FOLD_FAILURES.name, 1, topic=self.topic)
                log.exception("the fold of topic %s failed; rebuilding it", self.topic)
                self._reset(FoldUnavailable(f"the fold of topic {self.topic} failed: {exc}"))
            if time.monotonic() - started > 60:
                backoff = _BACKOFF_MIN_S
            await asyncio.sleep(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, _BACKOFF_MAX_S)

    async def _follow(self) -> None:
        owner = self._owner
        count = await owner.source.partition_count(self.topic)
        pointers = await asyncio.gather(
            *(owner.eventual.pointer2(self.topic, p) for p in range(count))
        )
        quarantined = await owner.eventual.quarantined_ids(self.topic)
        settings = owner.settings
        # Listed after pointer2 was read, and trusted from the log's ends read after the listing:
        # what it misses was written or purged by records the folds consume before those ends
        # (docs/concurrency.md, "Journals the fold knows are new").
        known = KnownJournals() if settings.list_journals else None
        self.folds = {
            p: PartitionFold(
                self.topic,
                p,
                0 if pointer is None else pointer + 1,
                owner.budget,
                max_journals=settings.max_journals_per_partition,
                max_fates=settings.max_fates_per_partition,
            )
            for p, pointer in enumerate(pointers)
        }
        for fold in self.folds.values():
            fold.quarantines_known(quarantined, fold.start - 1)
            fold.known = known
        self._start_wanted = {p: asyncio.Event() for p in range(count)}
        starts = {p: fold.start for p, fold in self.folds.items()}
        async with asyncio.TaskGroup() as group:  # any of them failing stops all
            group.create_task(self._consume(starts))
            group.create_task(self._poll_pointers(count))
            if known is not None:
                group.create_task(self._list_journals(known, count))
            for partition in range(count):
                group.create_task(self._start_journals(partition))

    async def _consume(self, starts: dict[int, int]) -> None:
        stream = self._owner.stream.follow(self.topic, starts)
        try:
            async for batches in stream:
                for batch in batches:
                    self._fold(batch)
                self._ready.set()
        finally:
            await stream.aclose()

    def _fold(self, batch: PartitionBatch) -> None:
        fold = self.folds[batch.partition]
        for record in batch.records:
            fold.consume(record)
        fold.passed(batch.next_offset - 1)
        self._settle(batch.partition, fold)

    def _settle(self, partition: int, fold: PartitionFold) -> None:
        """After the fold moved: wake the waiters it passed, start the journals it met."""
        self._count_new_starts(fold)
        waiters = self._positions.get(partition)
        while waiters and waiters[0][0] <= fold.position:
            _, _, future = heapq.heappop(waiters)
            if not future.done():
                future.set_result(None)
        fold.decided.clear()
        if fold.overlaps:
            overlaps, fold.overlaps = fold.overlaps, []
            for overlap in overlaps:
                self._owner.classify(self.topic, partition, overlap)
        if fold.new_pending:
            fold.new_pending.clear()
            self._want_start(partition)
        for key, future in list(self._starting.items()):
            # a journal given up while it waited (too many records waiting): nothing will start it
            if key[0] == partition and key[1] not in fold.pending and not future.done():
                del self._starting[key]
                future.set_exception(FoldUnavailable(f"journal {key[1]} was not started"))

    def _count_new_starts(self, fold: PartitionFold) -> None:
        if fold.started_new:
            self._owner.metrics.increment(FOLD_NEW_STARTS.name, fold.started_new, topic=self.topic)
            fold.started_new = 0

    async def _list_journals(self, known: KnownJournals, partitions: int) -> None:
        """Add every journal of the topic with a head in Cassandra to `known`, then let the folds
        start the others as new; listed again from the start after Cassandra failed. Any other
        failure leaves this build of the folds without the listing (every journal met for the
        first time is started from Cassandra), rather than failing the folds with it."""
        owner = self._owner
        backoff = _LISTING_BACKOFF_MIN_S
        while True:
            began = time.monotonic()
            count = 0
            try:
                ids = owner.eventual.ids(self.topic)
                async with aclosing(ids):
                    async for id_ in ids:
                        known.add(id_)
                        count += 1
                # Read after the last head: a head the listing missed because a purge removed it
                # meanwhile was purged by a record below these ends (read/known.py).
                ends = await owner.source.end_offsets(self.topic, list(range(partitions)))
            except (Unavailable, DeadlineExceeded) as exc:
                log.warning(
                    "listing the journals of %s failed (%s); again in %.0f s (new journals are "
                    "started from Cassandra meanwhile)",
                    self.topic,
                    exc,
                    backoff,
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _LISTING_BACKOFF_MAX_S)
                continue
            except Exception:
                log.exception(
                    "listing the journals of %s failed; its folds start every journal they meet "
                    "from Cassandra until they are rebuilt",
                    self.topic,
                )
                return
            known.complete(ends)
            owner.metrics.increment(FOLD_LISTINGS.name, 1, topic=self.topic)
            log.info(
                "listed the %d journals of %s with a head in %.1f s (%d bytes of filters): the "
                "folds start the others they meet from the log's ends now on without Cassandra",
                count,
                self.topic,
                time.monotonic() - began,
                known.size_bytes,
            )
            return

    def _want_start(self, partition: int) -> None:
        wanted = self._start_wanted.get(partition)
        if wanted is not None:
            wanted.set()

    async def _start_journals(self, partition: int) -> None:
        """Start the partition's pending journals in rounds of several, a few rounds at once
        (journals met while a round reads Cassandra need not wait for it to end)."""
        wanted = self._start_wanted[partition]
        fold = self.folds[partition]
        in_round: set[str] = set()
        rounds = asyncio.Semaphore(_ROUNDS_AT_ONCE)
        backoff = [_BACKOFF_MIN_S]

        async def round_of(ids: list[str]) -> None:
            try:
                await self._start_round(partition, fold, ids)
                backoff[0] = _BACKOFF_MIN_S
            except Exception:
                log.warning(
                    "starting journals of %s:%d failed; retrying",
                    self.topic,
                    partition,
                    exc_info=True,
                )
                await asyncio.sleep(backoff[0] * (0.5 + random.random()))
                backoff[0] = min(backoff[0] * 2, _BACKOFF_MAX_S)
            finally:
                in_round.difference_update(ids)
                rounds.release()
                wanted.set()  # what is still pending gets a round

        async with asyncio.TaskGroup() as group:
            while True:
                await wanted.wait()
                wanted.clear()
                waiting = [id_ for id_ in fold.pending if id_ not in in_round]
                while waiting:
                    await rounds.acquire()
                    waiting = [id_ for id_ in waiting if id_ in fold.pending]
                    if not waiting:
                        rounds.release()
                        break
                    ids, waiting = waiting[:_STARTS_PER_ROUND], waiting[_STARTS_PER_ROUND:]
                    in_round.update(ids)
                    group.create_task(round_of(ids))

    async def _start_round(self, partition: int, fold: PartitionFold, ids: list[str]) -> None:
        owner = self._owner
        # Where each window begins, read before the heads; and which wait is started: a journal
        # given up and met again meanwhile waits anew, for a round of its own.
        begins = {id_: fold.begin(id_) for id_ in ids}
        unmet = {id_: fold.unmet(id_) for id_ in ids}
        waits = {id_: fold.pending[id_] for id_ in ids}
        quarantined_ids = fold.quarantined_ids  # complete up to where the begins start
        keys = [Key(self.topic, id_) for id_ in ids]
        limit = asyncio.Semaphore(_HEADS_AT_ONCE)

        async def read(key: Key) -> tuple[JournalHead | None, QuarantinedRecord | None]:
            async with limit:
                if key.id not in quarantined_ids:
                    return await owner.eventual.head(key), None
                head, quarantined = await asyncio.gather(
                    owner.eventual.head(key), owner.eventual.quarantined(key)
                )
                return head, quarantined

        found = await asyncio.gather(*(read(key) for key in keys))
        end = (await owner.source.end_offsets(self.topic, [partition]))[partition]
        await self.passed(partition, end - 1)  # the window: all the head could hold
        for key, (head, quarantined) in zip(keys, found, strict=True):
            if fold.pending.get(key.id) is not waits[key.id]:
                continue
            begin, unbuffered = begins[key.id]
            earlier: list[ActionRecord | Poison] = []
            if unbuffered is not None:
                wanted = key.id.encode()
                raws = owner.source.records(self.topic, partition, *unbuffered, wanted.__eq__)
                earlier = [item async for raw in raws if (item := decoded(raw)) is not None]
            window = [
                *(r for r in earlier if isinstance(r, ActionRecord)),
                *fold.window(key.id, end),
            ]
            start = start_of(key, partition, head, quarantined, begin, window, unmet[key.id])
            fold.install(key.id, start, earlier)
            owner.metrics.increment(FOLD_STARTS.name, 1, topic=self.topic)
            future = self._starting.pop((partition, key.id), None)
            if future is not None and not future.done():
                future.set_result(None)
        self._settle(partition, fold)

    async def _poll_pointers(self, count: int) -> None:
        owner = self._owner
        last_check = time.monotonic()
        while True:
            await asyncio.sleep(owner.settings.pointer_poll_interval_s)
            try:
                pointers = await asyncio.gather(
                    *(owner.eventual.pointer2(self.topic, p) for p in range(count))
                )
                quarantined = await owner.eventual.quarantined_ids(self.topic)
            except (Unavailable, DeadlineExceeded) as exc:
                # The folds go on without Cassandra: known journals keep being answered, their
                # tails just stay longer in memory. Pointer2 is read again next time.
                log.warning("reading pointer2 of %s failed (%s); folding on", self.topic, exc)
                continue
            for partition, pointer in enumerate(pointers):
                if pointer is not None:
                    fold = self.folds[partition]
                    fold.replicated_up_to(pointer)
                    fold.quarantines_known(quarantined, pointer)
            if time.monotonic() - last_check > _PARTITION_CHECK_INTERVAL_S:
                last_check = time.monotonic()
                now_count = await owner.source.partition_count(self.topic)
                if now_count != count:
                    raise PartitionCountChanged(self.topic, count, now_count)


class Follower(AsyncResource):
    """The folds of every journal topic this process is asked about; open with `async with`."""

    def __init__(
        self,
        stream: TopicStream,
        source: PartitionSource,
        eventual: EventualReader,
        settings: FoldSettings,
        metrics: Metrics | None = None,
    ) -> None:
        self.stream = stream
        self.source = source
        self.eventual = eventual
        self.settings = settings
        self.metrics = metrics or NoopMetrics()
        self.wait_timeout_s = settings.wait_timeout_s
        self.budget = PayloadBudget(settings.payload_budget_bytes)
        self.ends = EndOffsets(source.end_offsets)
        # Receives each dropped append over seqNrs its journal held, to be compared off the
        # fold's path (read/outcome.py registers it).
        self.classify: Callable[[str, int, Overlap], None] = lambda topic, partition, overlap: None
        self._topics: dict[str, _TopicFolds] = {}
        self._janitor: asyncio.Task[None] | None = None

    async def open(self) -> None:
        with untraced():
            self._janitor = asyncio.create_task(self._expire_idle(), name="kjournal-fold-janitor")

    async def close(self) -> None:
        await cancel_and_wait(self._janitor)
        topics, self._topics = list(self._topics.values()), {}
        for topic in topics:
            await topic.stop()

    async def topic(self, topic: str) -> _TopicFolds:
        """The topic's folds, ready (followed from now on if they were not)."""
        folds = self._topics.get(topic)
        if folds is None:
            folds = self._topics[topic] = _TopicFolds(topic, self)
            folds.start()
        folds.last_used = time.monotonic()
        await folds.ready()
        return folds

    def following(self, topic: str) -> _TopicFolds | None:
        return self._topics.get(topic)

    async def fate(self, key: Key, partition: int, offset: int) -> Fate | Lookup:
        """The fate of the record at `offset` once the fold decided it (Lookup.NO_RECORD or
        GONE when it will not). Callers bound the wait (asyncio.timeout)."""
        folds = await self.topic(key.topic)
        try:
            async with asyncio.timeout(self.wait_timeout_s):
                fold = await folds.passed(partition, offset)
        except TimeoutError:
            # Behind, or asked about an offset no record has yet: only Kafka can tell which.
            if offset >= await self.ends.end(key.topic, partition):
                return Lookup.NO_RECORD
            fold = await folds.passed(partition, offset)
        found = fold.fate(offset)
        if found is Lookup.PENDING:
            await folds.wait_started(partition, key.id)
            found = folds.fold(partition).fate(offset)
        return found

    async def fate_at(self, topic: str, partition: int, offset: int) -> Fate | Lookup:
        """The fate of the record at `offset` of the partition (whichever journal's), once the
        fold decided it. Callers bound the wait (asyncio.timeout)."""
        folds = await self.topic(topic)
        fold = await folds.passed(partition, offset)
        found = fold.fate(offset)
        if found is Lookup.PENDING:
            id_ = fold.awaiting(offset)
            if id_ is not None:
                await folds.wait_started(partition, id_)
            found = folds.fold(partition).fate(offset)
        return found

    async def entry(
        self, key: Key, partition: int, at_least: int
    ) -> tuple[PartitionFold, JournalEntry]:
        """The journal's entry once its partition's fold has consumed `at_least`. Callers bound
        the wait (asyncio.timeout)."""
        folds = await self.topic(key.topic)
        await folds.passed(partition, at_least)
        entry = await folds.started(partition, key.id)
        return folds.fold(partition), entry

    def replicated(self, topic: str, partition: int, pointer2: int) -> None:
        """pointer2 as just read (a status asks it afresh): the fold drops what it passed."""
        folds = self._topics.get(topic)
        fold = folds.folds.get(partition) if folds is not None else None
        if fold is not None:
            fold.replicated_up_to(pointer2)

    def partitions(self, topic: str) -> int:
        folds = self._topics.get(topic)
        return len(folds.folds) if folds is not None else 0

    def journals(self, topic: str) -> int:
        folds = self._topics.get(topic)
        return sum(len(f.journals) for f in folds.folds.values()) if folds else 0

    async def _expire_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.settings.idle_expiry_s / 2, 30.0))
            cutoff = time.monotonic() - self.settings.idle_expiry_s
            for topic, folds in list(self._topics.items()):
                if folds.last_used < cutoff:
                    del self._topics[topic]
                    await folds.stop()
