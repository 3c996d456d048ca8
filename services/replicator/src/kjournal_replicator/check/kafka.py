"""The driver's view of the journal log: offsets, partition counts, whole or filtered scans."""

from __future__ import annotations

from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings

from kjournal_replicator.scanned_log import ScannedLog

__all__ = ["KafkaLog"]

_POOL = ConsumerPoolSettings(max_size=8, max_poll_records=2000, poll_timeout_ms=50)


class KafkaLog(ScannedLog):
    """Open with `async with`: consumers without a group that assign, seek and commit nothing."""

    def __init__(self, kafka: KafkaSettings) -> None:
        super().__init__(kafka, _POOL)

    async def partition_count(self, topic: str) -> int:
        return await self.scanner.partition_count(topic)

    async def offsets(self, topic: str, count: int) -> dict[int, tuple[int, int]]:
        """(beginning, end) of every partition of the topic."""
        return await self.scanner.offsets(topic, list(range(count)))
