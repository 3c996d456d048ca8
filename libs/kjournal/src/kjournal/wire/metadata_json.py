"""JSON of HeaderMetadata, PayloadMetadata and RecordMetadata.

HeaderMetadata  `{}` or `{"data": <any JSON>}`                   (inside the `journal.action` header)
PayloadMetadata `{}`, `{"expireAfter": "1 day", "data": <any>}`  (inside the record value)
RecordMetadata  `{"header": {...}, "payload": {...}}`            (the `journal.metadata` column)

An absent field and a JSON null are the same thing (Play's readNullable). The `*_value` functions
work on parsed JSON and raise ValueError or InvalidDuration; the text functions raise FormatError.
"""

from __future__ import annotations

from kjournal.errors import FormatError
from kjournal.errors import InvalidDuration
from kjournal.model import EMPTY_RECORD_METADATA
from kjournal.model import HeaderMetadata
from kjournal.model import JsonValue
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model.durations import expire_after_from_json
from kjournal.model.durations import expire_after_to_json
from kjournal.wire import json_text

_EMPTY_HEADER = HeaderMetadata()
_EMPTY_PAYLOAD = PayloadMetadata()


def header_metadata_to_value(metadata: HeaderMetadata) -> dict[str, JsonValue]:
    return {} if metadata.data is None else {"data": metadata.data}


def header_metadata_from_value(value: JsonValue) -> HeaderMetadata:
    if not isinstance(value, dict):
        raise ValueError(f"header metadata must be a JSON object, got {_kind(value)}")
    data = value.get("data")
    return _EMPTY_HEADER if data is None else HeaderMetadata(data)


def payload_metadata_to_value(metadata: PayloadMetadata) -> dict[str, JsonValue]:
    result: dict[str, JsonValue] = {}
    if metadata.expire_after is not None:
        result["expireAfter"] = expire_after_to_json(metadata.expire_after)
    if metadata.data is not None:
        result["data"] = metadata.data
    return result


def payload_metadata_from_value(value: JsonValue) -> PayloadMetadata:
    if not isinstance(value, dict):
        raise ValueError(f"payload metadata must be a JSON object, got {_kind(value)}")
    expire_after = expire_after_from_json(value.get("expireAfter"))
    data = value.get("data")
    if expire_after is None and data is None:
        return _EMPTY_PAYLOAD
    return PayloadMetadata(expire_after, data)


def payload_metadata_to_json(metadata: PayloadMetadata) -> str:
    return json_text.dumps(payload_metadata_to_value(metadata))


def payload_metadata_from_json(text: str | bytes) -> PayloadMetadata:
    try:
        return payload_metadata_from_value(json_text.loads(text))
    except (ValueError, InvalidDuration) as exc:
        raise FormatError(f"invalid payload metadata JSON: {exc}") from exc


def header_metadata_to_json(metadata: HeaderMetadata) -> str:
    return json_text.dumps(header_metadata_to_value(metadata))


def header_metadata_from_json(text: str | bytes) -> HeaderMetadata:
    try:
        return header_metadata_from_value(json_text.loads(text))
    except ValueError as exc:
        raise FormatError(f"invalid header metadata JSON: {exc}") from exc


def record_metadata_to_value(metadata: RecordMetadata) -> dict[str, JsonValue]:
    return {
        "header": header_metadata_to_value(metadata.header),
        "payload": payload_metadata_to_value(metadata.payload),
    }


def record_metadata_from_value(value: JsonValue) -> RecordMetadata:
    """The current shape; if that is empty or invalid, the pre-RecordMetadata HeaderMetadata shape.

    As in the Scala reader: `{"data": ...}` (old rows) becomes the header half, and a document
    whose current shape does not parse falls back to that reading rather than failing.
    """
    if not isinstance(value, dict):
        raise ValueError(f"record metadata must be a JSON object, got {_kind(value)}")
    try:
        current = _record_metadata_current(value)
    except (ValueError, InvalidDuration):
        current = EMPTY_RECORD_METADATA
    if current != EMPTY_RECORD_METADATA:
        return current
    header = header_metadata_from_value(value)
    return EMPTY_RECORD_METADATA if header == _EMPTY_HEADER else RecordMetadata(header=header)


def record_metadata_to_json(metadata: RecordMetadata) -> str:
    """The `journal.metadata` column text, e.g. `{"header":{},"payload":{"expireAfter":"1 day"}}`."""
    return json_text.dumps(record_metadata_to_value(metadata))


def record_metadata_from_json(text: str | bytes | None) -> RecordMetadata:
    """Read the `journal.metadata` column; None (a null column) is empty metadata."""
    if text is None:
        return EMPTY_RECORD_METADATA
    try:
        return record_metadata_from_value(json_text.loads(text))
    except ValueError as exc:
        raise FormatError(f"invalid record metadata JSON: {exc}") from exc


def _record_metadata_current(value: dict[str, JsonValue]) -> RecordMetadata:
    # Play's WithDefaultValues: a missing half is the empty default.
    header = value.get("header")
    payload = value.get("payload")
    return RecordMetadata(
        header=_EMPTY_HEADER if header is None else header_metadata_from_value(header),
        payload=_EMPTY_PAYLOAD if payload is None else payload_metadata_from_value(payload),
    )


def _kind(value: JsonValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
