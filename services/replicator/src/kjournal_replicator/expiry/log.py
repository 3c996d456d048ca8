"""The journal log as the expiry job sees it (`kjournal.expiry.ExpiryLog` over Kafka).

Tails are read with the reader's scanner (assign and seek, no group, keys compared before anything
is parsed); purges are produced like a writer's (`acks=all`, partitioned as Java does), with the
job's origin in their header.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from types import TracebackType

from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import ConsumerPoolSettings, KafkaSettings
from kjournal.kafka.tail_scanner import KafkaTailScanner
from kjournal.kafka.topics import TopicPartitions
from kjournal.model import Key, PartitionOffset, Purge, PurgeHeader
from kjournal.wire.record import ConsumedRecord, encode_action

__all__ = ["ORIGIN", "KafkaExpiryLog"]

ORIGIN = f"kjournal-expiry@{socket.gethostname()}"
"""The `origin` of the purges the job produces: where an operator reading the log sees them."""


class KafkaExpiryLog:
    """Open with `async with`; implements kjournal.expiry.ExpiryLog."""

    def __init__(self, kafka: KafkaSettings, version: str) -> None:
        self._kafka = kafka
        self._version = version
        self._stack = AsyncExitStack()
        self._scanner: KafkaTailScanner | None = None
        self._producer: ActionProducer | None = None

    async def __aenter__(self) -> KafkaExpiryLog:
        stack = self._stack
        try:
            topics = await stack.enter_async_context(TopicPartitions(self._kafka))
            pool_settings = ConsumerPoolSettings(max_size=2)
            pool = await stack.enter_async_context(ConsumerPool(self._kafka, pool_settings))
            self._scanner = KafkaTailScanner(pool, topics, pool_settings)
            self._producer = await stack.enter_async_context(ActionProducer(self._kafka, topics))
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
            raise RuntimeError("KafkaExpiryLog is not open")
        return self._scanner

    async def partition(self, key: Key) -> int:
        return await self.scanner.partition(key)

    async def end_offset(self, topic: str, partition: int) -> int:
        return await self.scanner.end_offset(topic, partition)

    def records(
        self,
        topic: str,
        partition: int,
        start: int,
        end: int,
        accept: Callable[[bytes | None], bool],
    ) -> AsyncIterator[ConsumedRecord]:
        return self.scanner.records(topic, partition, start, end, accept)

    async def purge(self, key: Key) -> PartitionOffset:
        if self._producer is None:
            raise RuntimeError("KafkaExpiryLog is not open")
        action = Purge(key, datetime.now(UTC), PurgeHeader(ORIGIN, self._version))
        return await self._producer.send(encode_action(action))
