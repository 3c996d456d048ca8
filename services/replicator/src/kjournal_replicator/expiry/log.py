"""The journal log as the expiry job sees it (`kjournal.expiry.ExpiryLog` over Kafka).

Tails are read with the reader's scanner (assign and seek, no group, keys compared before anything
is parsed); purges are produced like a writer's (`acks=all`, partitioned as Java does), with the
job's origin in their header.
"""

from __future__ import annotations

import socket
from datetime import UTC
from datetime import datetime

from kjournal.kafka.producer import ActionProducer
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import Purge
from kjournal.model import PurgeHeader
from kjournal.wire.record import encode_action

from kjournal_replicator.scanned_log import ScannedLog

__all__ = ["ORIGIN", "KafkaExpiryLog"]

ORIGIN = f"kjournal-expiry@{socket.gethostname()}"
"""The `origin` of the purges the job produces: where an operator reading the log sees them."""


class KafkaExpiryLog(ScannedLog):
    """Open with `async with`; implements kjournal.expiry.ExpiryLog."""

    def __init__(self, kafka: KafkaSettings, version: str) -> None:
        super().__init__(kafka, ConsumerPoolSettings(max_size=2))
        self._version = version
        self._producer: ActionProducer | None = None

    async def open(self) -> None:
        topics = await self._open_scanner()
        self._producer = await self._stack.enter_async_context(ActionProducer(self._kafka, topics))

    async def partition(self, key: Key) -> int:
        return await self.scanner.partition(key)

    async def purge(self, key: Key) -> PartitionOffset:
        if self._producer is None:
            raise RuntimeError("KafkaExpiryLog is not open")
        action = Purge(key, datetime.now(UTC), PurgeHeader(ORIGIN, self._version))
        return await self._producer.send(encode_action(action))
