"""A bounded pool of group-less consumers for reading a partition's unreplicated tail."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

from aiokafka import AIOKafkaConsumer

from kjournal.aio import AsyncResource
from kjournal.aio import cancel_and_wait
from kjournal.aio import uninterrupted
from kjournal.errors import DeadlineExceeded
from kjournal.kafka.errors import kafka_errors
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.metrics import Metrics
from kjournal.metrics import NoopMetrics
from kjournal.metrics.catalogue import CONSUMER_ACQUIRE_SECONDS
from kjournal.metrics.catalogue import CONSUMER_POOL_TIMEOUTS
from kjournal.spans import conventions as sem
from kjournal.spans import span

log = logging.getLogger(__name__)


class ConsumerPool(AsyncResource):
    """At most `max_size` consumers; idle ones are closed; acquiring waits at most a deadline."""

    def __init__(
        self,
        kafka: KafkaSettings,
        settings: ConsumerPoolSettings,
        metrics: Metrics | None = None,
    ) -> None:
        self._kafka = kafka
        self._settings = settings
        self._metrics = metrics or NoopMetrics()
        self._slots = asyncio.Semaphore(settings.max_size)
        # (consumer, idle since, the topic it last served): a consumer whose client already
        # tracks the asked topic answers without a metadata request
        self._idle: list[tuple[AIOKafkaConsumer, float, str | None]] = []
        self._reaper: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._closed = False

    async def open(self) -> None:
        self._reaper = asyncio.create_task(self._reap_idle(), name="kjournal-consumer-pool-reaper")

    async def close(self) -> None:
        self._closed = True
        # The reaper is told, not cancelled: a cancel that lands while it stops a consumer is
        # swallowed by aiokafka and would leave the consumer half stopped.
        self._closing.set()
        if self._reaper is not None:
            await asyncio.wait({self._reaper})
            await cancel_and_wait(self._reaper)  # its error, if it ended with one
        idle, self._idle = self._idle, []
        for consumer, _, _ in idle:
            await uninterrupted(consumer.stop())

    @property
    def idle_count(self) -> int:
        return len(self._idle)

    @contextlib.asynccontextmanager
    async def acquire(self, topic: str | None = None) -> AsyncIterator[AIOKafkaConsumer]:
        """A consumer for `topic`, one that served it last if one is idle; whatever it was
        assigned is paused (it fetches nothing). With tracing on, waiting for it (and creating
        it) is a span, `consumer acquire`.

        Returned consumers keep their assignment, paused: unassigning would make aiokafka track
        no topic, and it then asks the brokers for every topic's metadata at once, and again
        when the next caller assigns."""
        started = time.perf_counter()
        with span(sem.SPAN_CONSUMER_ACQUIRE) as acquiring:
            try:
                async with asyncio.timeout(self._settings.acquire_timeout_s):
                    await self._slots.acquire()
            except TimeoutError:
                self._metrics.increment(CONSUMER_POOL_TIMEOUTS.name)
                raise DeadlineExceeded(
                    f"no Kafka consumer free within {self._settings.acquire_timeout_s} s "
                    f"(pool of {self._settings.max_size})"
                ) from None
            if acquiring is not None:
                acquiring.set_attribute(sem.CONSUMER_CREATED, not self._idle)
            try:
                consumer = self._take_idle(topic) or await self._create()
            except BaseException:
                self._slots.release()
                raise
        healthy = False
        try:
            self._metrics.observe(CONSUMER_ACQUIRE_SECONDS.name, time.perf_counter() - started)
            try:
                yield consumer
                healthy = True
            finally:
                if healthy and not self._closed:
                    assigned = consumer.assignment()
                    if assigned:
                        consumer.pause(*assigned)
                    served = next(iter(assigned)).topic if assigned else topic
                    self._idle.append((consumer, time.monotonic(), served))
                else:
                    await uninterrupted(consumer.stop())
        finally:
            self._slots.release()

    def _take_idle(self, topic: str | None) -> AIOKafkaConsumer | None:
        """The most recently idle consumer that served `topic`, else the most recent one."""
        if not self._idle:
            return None
        for index in range(len(self._idle) - 1, -1, -1):
            if self._idle[index][2] == topic:
                return self._idle.pop(index)[0]
        return self._idle.pop()[0]

    async def _create(self) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(
            **self._kafka.aiokafka_options(),
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=self._settings.max_poll_records,
            fetch_max_wait_ms=50,
        )
        try:
            with kafka_errors():
                await uninterrupted(consumer.start())
        except BaseException:
            # A consumer that failed to start still holds its client.
            await uninterrupted(consumer.stop())
            raise
        return consumer

    async def _reap_idle(self) -> None:
        interval = min(self._settings.idle_timeout_s / 2, 5.0)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), interval)
            if self._closing.is_set():
                return
            cutoff = time.monotonic() - self._settings.idle_timeout_s
            stale = [entry for entry in self._idle if entry[1] < cutoff]
            self._idle = [entry for entry in self._idle if entry[1] >= cutoff]
            for consumer, _, _ in stale:
                with contextlib.suppress(Exception):
                    await uninterrupted(consumer.stop())
            if stale:
                log.debug("closed %d idle consumers", len(stale))
