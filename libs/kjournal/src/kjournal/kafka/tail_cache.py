"""TailCache: tails each journal topic once per process, so most reads need no Kafka read at all.

Per topic, one group-less consumer reads every partition from pointer2 + 1 on, keeping keys and
headers of each record (and append payloads within a byte budget); a second loop polls pointer2 and
drops what the replicator has caught up with. Answers are complete or "unknown" (None), never a
guess: while the consumer is behind the asked range a query waits briefly, then gives up. Consumer
errors rebuild the topic's cache from scratch; a changed partition count does too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from types import TracebackType

from aiokafka import AIOKafkaConsumer, TopicPartition

from kjournal.aio import cancel_and_wait
from kjournal.errors import PartitionCountChanged
from kjournal.kafka.partition_cache import PartitionCache, PayloadBudget
from kjournal.kafka.records import consumed_record
from kjournal.kafka.settings import KafkaSettings, TailCacheSettings
from kjournal.kafka.topics import TopicPartitions
from kjournal.metrics import Metrics, NoopMetrics
from kjournal.metrics.catalogue import TAIL_CACHE_FAILURES, TAIL_CACHE_REQUESTS
from kjournal.model import Key
from kjournal.ports import EventualReader
from kjournal.spans import untraced
from kjournal.tail import Tail
from kjournal.wire.record import decode_action_record

log = logging.getLogger(__name__)

_PARTITION_CHECK_INTERVAL_S = 5.0
_BACKOFF_MIN_S = 0.01
_BACKOFF_MAX_S = 1.0


class _TopicCache:
    def __init__(self, topic: str, owner: TailCache) -> None:
        self.topic = topic
        self._owner = owner
        self.partitions: dict[int, PartitionCache] = {}
        self.ready = False
        self.last_used = time.monotonic()
        self._progress = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        # Started by the first read of the topic, but not part of that read (nor traced).
        with untraced():
            self._task = asyncio.create_task(self._run(), name=f"kjournal-head-cache-{self.topic}")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._reset()

    def _reset(self) -> None:
        self.ready = False
        for cache in self.partitions.values():
            cache.clear()
        self.partitions = {}

    async def tail(self, id: str, partition: int, start: int, end: int) -> Tail | None:
        self.last_used = time.monotonic()
        deadline = time.monotonic() + self._owner.settings.wait_timeout_s
        while True:
            cache = self.partitions.get(partition) if self.ready else None
            if cache is not None:
                if start <= cache.replicated:
                    return None
                answer = cache.tail(id, start, end)
                if answer is not None:
                    return answer
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            async with self._progress:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._progress.wait(), remaining)

    async def _notify(self) -> None:
        async with self._progress:
            self._progress.notify_all()

    async def _run(self) -> None:
        backoff = _BACKOFF_MIN_S
        while True:
            started = time.monotonic()
            try:
                await self._consume()
            except asyncio.CancelledError:
                raise
            except Exception:
                self._owner.metrics.increment(TAIL_CACHE_FAILURES.name, 1, topic=self.topic)
                log.exception("tail cache of topic %s failed; rebuilding", self.topic)
            self._reset()
            await self._notify()
            if time.monotonic() - started > 60:
                backoff = _BACKOFF_MIN_S
            await asyncio.sleep(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, _BACKOFF_MAX_S)

    async def _consume(self) -> None:
        owner = self._owner
        count = await owner.topics.count(self.topic, refresh=True)
        pointers = await asyncio.gather(
            *(owner.eventual.pointer2(self.topic, p) for p in range(count))
        )
        self.partitions = {
            p: PartitionCache(
                -1 if pointer is None else pointer,
                owner.settings.max_journals_per_partition,
                owner.budget,
            )
            for p, pointer in enumerate(pointers)
        }
        consumer = AIOKafkaConsumer(
            **owner.kafka.aiokafka_options(),
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=1_000,
            fetch_max_wait_ms=50,
        )
        try:
            await consumer.start()
            tps = [TopicPartition(self.topic, p) for p in range(count)]
            consumer.assign(tps)
            for tp in tps:
                consumer.seek(tp, self.partitions[tp.partition].replicated + 1)
            self.ready = True
            async with asyncio.TaskGroup() as group:  # either failing stops both
                group.create_task(self._consume_loop(consumer, tps))
                group.create_task(self._poll_pointers(count))
        finally:
            self.ready = False
            await consumer.stop()

    async def _consume_loop(self, consumer: AIOKafkaConsumer, tps: list[TopicPartition]) -> None:
        while True:
            batches = await consumer.getmany(*tps, timeout_ms=100, max_records=500)
            for tp, records in batches.items():
                cache = self.partitions[tp.partition]
                for record in records:
                    if record.key is not None:
                        action = decode_action_record(consumed_record(record))
                        if action is not None:
                            cache.add(action.action.key.id, action)
            for tp in tps:
                self.partitions[tp.partition].seen(await consumer.position(tp) - 1)
            await self._notify()

    async def _poll_pointers(self, count: int) -> None:
        owner = self._owner
        last_check = time.monotonic()
        while True:
            await asyncio.sleep(owner.settings.pointer_poll_interval_s)
            pointers = await asyncio.gather(
                *(owner.eventual.pointer2(self.topic, p) for p in range(count))
            )
            for partition, pointer in enumerate(pointers):
                if pointer is not None:
                    self.partitions[partition].replicated_up_to(pointer)
            await self._notify()
            if time.monotonic() - last_check > _PARTITION_CHECK_INTERVAL_S:
                last_check = time.monotonic()
                now_count = await owner.topics.count(self.topic, refresh=True)
                if now_count != count:
                    raise PartitionCountChanged(self.topic, count, now_count)


class TailCache:
    """Implements `tail.TailSource`; open it with `async with`."""

    def __init__(
        self,
        kafka: KafkaSettings,
        settings: TailCacheSettings,
        eventual: EventualReader,
        topics: TopicPartitions,
        metrics: Metrics | None = None,
    ) -> None:
        self.kafka = kafka
        self.settings = settings
        self.eventual = eventual
        self.topics = topics
        self.metrics = metrics or NoopMetrics()
        self.budget = PayloadBudget(settings.payload_budget_bytes)
        self._topics: dict[str, _TopicCache] = {}
        self._janitor: asyncio.Task[None] | None = None

    async def __aenter__(self) -> TailCache:
        self._janitor = asyncio.create_task(self._expire_idle(), name="kjournal-head-cache-janitor")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await cancel_and_wait(self._janitor)
        caches, self._topics = list(self._topics.values()), {}
        for cache in caches:
            await cache.stop()

    async def tail(self, key: Key, partition: int, start: int, end: int) -> Tail | None:
        if not self.settings.enabled:
            return None
        cache = self._topics.get(key.topic)
        if cache is None:
            cache = self._topics[key.topic] = _TopicCache(key.topic, self)
            cache.start()
        answer = await cache.tail(key.id, partition, start, end)
        self.metrics.increment(
            TAIL_CACHE_REQUESTS.name,
            1,
            topic=key.topic,
            result="hit" if answer is not None else "unknown",
        )
        return answer

    def partitions(self, topic: str) -> int:
        """How many partitions of `topic` the cache is tailing now (0: none, or rebuilding)."""
        cache = self._topics.get(topic)
        return len(cache.partitions) if cache is not None and cache.ready else 0

    def journals(self, topic: str) -> int:
        cache = self._topics.get(topic)
        return sum(p.journals for p in cache.partitions.values()) if cache else 0

    async def _expire_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.settings.idle_expiry_s / 2, 30.0))
            cutoff = time.monotonic() - self.settings.idle_expiry_s
            for topic, cache in list(self._topics.items()):
                if cache.last_used < cutoff:
                    del self._topics[topic]
                    await cache.stop()
