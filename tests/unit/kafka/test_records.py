"""An aiokafka record becomes the `ConsumedRecord` that decodes to the action it carries."""

from __future__ import annotations

import pytest
from aiokafka.structs import ConsumerRecord
from kjournal.kafka.records import consumed_record
from kjournal.model import ActionRecord
from kjournal.testing.records import append
from kjournal.testing.records import consumed
from kjournal.testing.records import delete
from kjournal.testing.records import mark
from kjournal.wire.record import decode_action_record
from kjournal.wire.record import encode_action


@pytest.mark.parametrize(
    "record", [append(5, 1, 3), delete(6, 2), mark(7)], ids=["append", "delete", "mark"]
)
def test_an_aiokafka_record_decodes_to_its_action(record: ActionRecord) -> None:
    parts = encode_action(record.action)
    received: ConsumerRecord[bytes, bytes] = ConsumerRecord(
        topic=parts.topic,
        partition=record.partition_offset.partition,
        offset=record.offset,
        timestamp=parts.timestamp_ms,
        timestamp_type=0,
        key=parts.key,
        value=parts.value,
        checksum=None,
        serialized_key_size=len(parts.key),
        serialized_value_size=len(parts.value or b""),
        headers=parts.headers,
    )

    converted = consumed_record(received)

    assert converted == consumed(record)
    assert decode_action_record(converted) == record
