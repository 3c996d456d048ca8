"""The driver's view of the journal log: offsets, partition counts, whole or filtered scans."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from types import TracebackType

from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.settings import ConsumerPoolSettings, KafkaSettings
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topics import TopicPartitions
from kjournal.wire.record import ConsumedRecord

__all__ = ["KafkaLog"]

_POOL = ConsumerPoolSettings(max_size=8, max_poll_records=2000, poll_timeout_ms=50)


class KafkaLog:
    """Open with `async with`: consumers without a group that assign, seek and commit nothing."""

    def __init__(self, kafka: KafkaSettings) -> None:
        self._kafka = kafka
        self._stack = AsyncExitStack()
        self._scanner: KafkaTailScanner | None = None

    async def __aenter__(self) -> KafkaLog:
        stack = self._stack
        try:
            topics = await stack.enter_async_context(TopicPartitions(self._kafka))
            pool = await stack.enter_async_context(ConsumerPool(self._kafka, _POOL))
            self._scanner = KafkaTailScanner(pool, topics, _POOL)
        except BaseException:
            await stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    @property
    def scanner(self) -> KafkaTailScanner:
        if self._scanner is None:
            raise RuntimeError("KafkaLog is not open")
        return self._scanner

    async def partition_count(self, topic: str) -> int:
        return await self.scanner.partition_count(topic)

    async def offsets(self, topic: str, count: int) -> dict[int, tuple[int, int]]:
        """(beginning, end) of every partition of the topic."""
        return await self.scanner.offsets(topic, list(range(count)))

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
