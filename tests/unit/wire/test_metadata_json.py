"""The `journal.metadata` column JSON (cases of the Scala RecordMetadataTest) and its halves."""

from __future__ import annotations

import json

import pytest
from kjournal.errors import FormatError
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonValue
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.wire import header_metadata_from_json
from kjournal.wire import header_metadata_to_json
from kjournal.wire import payload_metadata_from_json
from kjournal.wire import payload_metadata_to_json
from kjournal.wire import record_metadata_from_json
from kjournal.wire import record_metadata_to_json

DAY = ExpireAfter.of(1, "day")
H = HeaderMetadata({"key0": "value0"})
P = PayloadMetadata(DAY, {"key1": "value1"})

WRITTEN = [
    (RecordMetadata(), '{"header":{},"payload":{}}'),
    (
        RecordMetadata(H, P),
        '{"header":{"data":{"key0":"value0"}},'
        '"payload":{"expireAfter":"1 day","data":{"key1":"value1"}}}',
    ),
    (
        RecordMetadata(H, PayloadMetadata(data={"key1": "value1"})),
        '{"header":{"data":{"key0":"value0"}},"payload":{"data":{"key1":"value1"}}}',
    ),
    (
        RecordMetadata(HeaderMetadata(), P),
        '{"header":{},"payload":{"expireAfter":"1 day","data":{"key1":"value1"}}}',
    ),
    (RecordMetadata(H), '{"header":{"data":{"key0":"value0"}},"payload":{}}'),
]


@pytest.mark.parametrize(("metadata", "text"), WRITTEN)
def test_record_metadata_writes_and_reads(metadata, text):
    assert record_metadata_to_json(metadata) == text
    assert record_metadata_from_json(text) == metadata
    assert record_metadata_from_json(text.encode()) == metadata


@pytest.mark.parametrize(
    ("text", "metadata"),
    [
        (None, RecordMetadata()),
        ("{}", RecordMetadata()),
        # Rows written before RecordMetadata existed hold only HeaderMetadata.
        ('{"data":{"key0":"value0"}}', RecordMetadata(H)),
        ('{"header":{"data":{"key0":"value0"}}}', RecordMetadata(H)),
        ('{"payload":{"expireAfter":86400000}}', RecordMetadata(payload=PayloadMetadata(DAY))),
        ('{"header":null,"payload":null}', RecordMetadata()),
        # The current shape does not parse: read as the old shape, as the Scala reader does.
        ('{"header":{"data":1},"payload":{"expireAfter":"later"}}', RecordMetadata()),
        ('{"header":5,"data":7}', RecordMetadata(HeaderMetadata(7))),
    ],
)
def test_record_metadata_reads_older_and_partial_shapes(text, metadata):
    assert record_metadata_from_json(text) == metadata


@pytest.mark.parametrize("text", ["", "nope", "[]", "5", '"x"', b"\xff"])
def test_record_metadata_that_is_not_a_json_object_is_a_format_error(text):
    with pytest.raises(FormatError):
        record_metadata_from_json(text)


def test_header_and_payload_halves():
    assert header_metadata_to_json(HeaderMetadata()) == "{}"
    assert header_metadata_to_json(H) == '{"data":{"key0":"value0"}}'
    assert header_metadata_from_json('{"data":null}') == HeaderMetadata()
    assert payload_metadata_to_json(P) == '{"expireAfter":"1 day","data":{"key1":"value1"}}'
    assert payload_metadata_from_json('{"expireAfter":"24 hours"}') == PayloadMetadata(DAY)
    with pytest.raises(FormatError):
        payload_metadata_from_json('{"expireAfter":"-1 day"}')
    with pytest.raises(FormatError):
        header_metadata_from_json("[]")


def test_data_may_be_any_json_value_and_keeps_key_order():
    values: list[JsonValue] = [
        1,
        "s",
        [1, {"b": 1, "a": 2}],
        {"z": 1, "a": {"y": None}},
        2.5,
        False,
    ]
    for data in values:
        metadata = RecordMetadata(HeaderMetadata(data), PayloadMetadata(data=data))
        text = record_metadata_to_json(metadata)
        assert json.loads(text)["header"]["data"] == data
        assert record_metadata_from_json(text) == metadata
    assert record_metadata_to_json(RecordMetadata(HeaderMetadata({"z": 1, "a": 2}))).startswith(
        '{"header":{"data":{"z":1,"a":2}}'
    )
