"""An aiokafka record as the wire layer's `ConsumedRecord`: the one conversion."""

from __future__ import annotations

from typing import Any

from aiokafka.structs import ConsumerRecord

from kjournal.wire.record import ConsumedRecord

__all__ = ["consumed_record"]


def consumed_record(record: ConsumerRecord[Any, Any]) -> ConsumedRecord:
    """What decoding needs of a record read without deserializers (key and value bytes)."""
    return ConsumedRecord(
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
        key=record.key,
        value=record.value,
        headers=record.headers,
        timestamp_ms=record.timestamp,
    )
