"""The journal log as the operators' jobs read it (the check's and the expiry's): through a tail
scanner of their own, whose consumers have no group and assign, seek and commit nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import AsyncExitStack

from kjournal.aio import AsyncResource
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topics import TopicPartitions
from kjournal.wire.record import ConsumedRecord

__all__ = ["ScannedLog"]


class ScannedLog(AsyncResource):
    """Open with `async with`; what a subclass opens besides (`open`) closes with the scanner."""

    def __init__(self, kafka: KafkaSettings, pool: ConsumerPoolSettings) -> None:
        self._kafka = kafka
        self._pool = pool
        self._stack = AsyncExitStack()
        self._scanner: KafkaTailScanner | None = None

    async def open(self) -> None:
        await self._open_scanner()

    async def _open_scanner(self) -> TopicPartitions:
        """Opens the scanner; returns the partition counts it reads, for a subclass to share."""
        topics = await self._stack.enter_async_context(TopicPartitions(self._kafka))
        pool = await self._stack.enter_async_context(ConsumerPool(self._kafka, self._pool))
        self._scanner = KafkaTailScanner(pool, topics, self._pool)
        return topics

    async def close(self) -> None:
        await self._stack.aclose()

    @property
    def scanner(self) -> KafkaTailScanner:
        if self._scanner is None:
            raise RuntimeError(f"{type(self).__name__} is not open")
        return self._scanner

    async def end_offset(self, topic: str, partition: int) -> int:
        return await self.scanner.end_offset(topic, partition)

    def records(
        self,
        topic: str,
        partition: int,
        start: int,
        end: int,
        accept: Callable[[bytes | None], bool] = lambda _: True,
    ) -> AsyncIterator[ConsumedRecord]:
        return self.scanner.records(topic, partition, start, end, accept)
