"""Partition counts of journal topics, from cluster metadata, cached briefly."""

from __future__ import annotations

import time
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient

from kjournal.aio import AsyncResource
from kjournal.aio import uninterrupted
from kjournal.errors import UnknownTopic
from kjournal.kafka.errors import kafka_errors
from kjournal.kafka.settings import KafkaSettings

_UNKNOWN_TOPIC = 3


class TopicPartitions(AsyncResource):
    """`await topics.count(topic)`; raises UnknownTopic for a topic the cluster does not have."""

    def __init__(self, settings: KafkaSettings) -> None:
        self._settings = settings
        self._admin = AIOKafkaAdminClient(**settings.aiokafka_options())
        self._counts: dict[str, tuple[int, float]] = {}

    async def open(self) -> None:
        with kafka_errors():
            await uninterrupted(self._admin.start())

    async def close(self) -> None:
        await uninterrupted(self._admin.close())

    async def count(self, topic: str, refresh: bool = False) -> int:
        cached = self._counts.get(topic)
        now = time.monotonic()
        if cached and not refresh and now - cached[1] < self._settings.metadata_max_age_s:
            return cached[0]
        with kafka_errors(topic):
            described = await self._admin.describe_topics([topic])
        entry: dict[str, Any] = described[0] if described else {"error_code": _UNKNOWN_TOPIC}
        partitions: list[Any] = entry.get("partitions") or []
        if entry["error_code"] == _UNKNOWN_TOPIC or not partitions:
            self._counts.pop(topic, None)
            raise UnknownTopic(topic)
        count = len(partitions)
        self._counts[topic] = (count, now)
        return count
