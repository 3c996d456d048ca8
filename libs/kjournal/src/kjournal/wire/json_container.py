"""The JSON container: an Append record value when no event is binary (record payloadType "json").

    {"events":[{"seqNr":1,"tags":["a"],"payloadType":"json","payload":{...}},
               {"seqNr":2,"tags":[],"payloadType":"text","payload":"hello"},
               {"seqNr":3,"tags":[]}],
     "metadata":{"expireAfter":"1 day","data":{...}}}

An event without a payload has neither `payloadType` nor `payload`. On read a missing
`payloadType` means json, a missing `metadata` (v0 writers) means empty, and a JSON-null
`payload` means no payload (as in the Scala reader).
"""

from __future__ import annotations

from typing import cast

from kjournal.errors import InvalidInput
from kjournal.errors import InvalidPayload
from kjournal.errors import PayloadFormatError
from kjournal.model import SEQ_NR_MAX
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import TextPayload
from kjournal.model import fast
from kjournal.model import seq_nr as checked_seq_nr
from kjournal.wire import json_text
from kjournal.wire.metadata_json import payload_metadata_from_value
from kjournal.wire.metadata_json import payload_metadata_to_value
from kjournal.wire.tag_order import scala_tag_order

_NO_TAGS: frozenset[str] = frozenset()
_EMPTY_METADATA = PayloadMetadata()


def encode_json_container(events: Events) -> bytes:
    """Encode events none of which is binary; InvalidPayload otherwise."""
    items: list[JsonValue] = []
    for event in events.events:
        tags = cast("list[JsonValue]", scala_tag_order(event.tags))
        item: dict[str, JsonValue] = {"seqNr": event.seq_nr, "tags": tags}
        payload = event.payload
        if payload is not None:
            if isinstance(payload, BinaryPayload):
                raise InvalidPayload(
                    f"event {event.seq_nr} has a binary payload, which needs the binary container"
                )
            item["payloadType"] = payload.type.value
            item["payload"] = payload.value
        items.append(item)
    document: dict[str, JsonValue] = {
        "events": items,
        "metadata": payload_metadata_to_value(events.metadata),
    }
    try:
        return json_text.dump_bytes(document)
    except ValueError as exc:
        raise InvalidPayload(f"events cannot be written as JSON: {exc}") from exc


def decode_json_container(data: bytes) -> Events:
    """Decode a JSON container (with or without `metadata`); PayloadFormatError if invalid."""
    try:
        root = json_text.loads(data)
    except ValueError as exc:
        raise PayloadFormatError(f"JSON container is not UTF-8 JSON: {exc}") from exc
    try:
        return _read_events(root)
    except (ValueError, InvalidInput) as exc:
        raise PayloadFormatError(f"invalid JSON container: {exc}") from exc


def _read_events(root: JsonValue) -> Events:
    if not isinstance(root, dict):
        raise ValueError("the container must be a JSON object")
    raw_events = root.get("events")
    if not isinstance(raw_events, list) or not raw_events:
        raise ValueError("events must be a non-empty array")
    metadata = root.get("metadata")
    return Events(
        tuple(_read_event(raw) for raw in raw_events),
        _EMPTY_METADATA if metadata is None else payload_metadata_from_value(metadata),
    )


def _read_event(raw: JsonValue) -> Event:
    if not isinstance(raw, dict):
        raise ValueError("each event must be a JSON object")
    seq_nr = raw.get("seqNr")
    if type(seq_nr) is not int or not 1 <= seq_nr <= SEQ_NR_MAX:
        # Event's own check, as its __init__ is passed by (kjournal/model/fast.py); 1.0 is a 1
        seq_nr = checked_seq_nr(json_text.read_long(seq_nr, "seqNr"))
    tags = raw.get("tags")
    if not isinstance(tags, list) or (tags and not all(isinstance(tag, str) for tag in tags)):
        raise ValueError(f"event {seq_nr}: tags must be an array of strings")
    payload_type = raw.get("payloadType")
    value = raw.get("payload")
    payload: Payload | None
    if payload_type is None or payload_type == "json":
        payload = None if value is None else JsonPayload(value)
    elif payload_type == "text":
        if value is not None and not isinstance(value, str):
            raise ValueError(f"event {seq_nr}: a text payload must be a JSON string")
        payload = None if value is None else TextPayload(value)
    else:
        raise ValueError(f"event {seq_nr}: payloadType must be json or text, got {payload_type!r}")
    return fast.event(seq_nr, frozenset(cast("list[str]", tags)) if tags else _NO_TAGS, payload)
