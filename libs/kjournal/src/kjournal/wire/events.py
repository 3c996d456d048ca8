"""An Append record's value: pick the container on write, dispatch on the header's payloadType
on read. The record-level payloadType is only ever BINARY or JSON."""

from __future__ import annotations

from kjournal.errors import PayloadFormatError
from kjournal.model import BinaryPayload
from kjournal.model import Events
from kjournal.model import PayloadType
from kjournal.wire.binary_container import decode_binary_container
from kjournal.wire.binary_container import encode_binary_container
from kjournal.wire.json_container import decode_json_container
from kjournal.wire.json_container import encode_json_container


def encode_events(events: Events) -> tuple[PayloadType, bytes]:
    """The JSON container when no event is binary, else the binary (version 1) container."""
    if any(isinstance(event.payload, BinaryPayload) for event in events.events):
        return PayloadType.BINARY, encode_binary_container(events)
    return PayloadType.JSON, encode_json_container(events)


def decode_events(payload_type: PayloadType, data: bytes) -> Events:
    """Decode a record value by its header's payloadType; PayloadFormatError if it is invalid."""
    if payload_type == PayloadType.BINARY:
        return decode_binary_container(data)
    if payload_type == PayloadType.JSON:
        return decode_json_container(data)
    raise PayloadFormatError(f"a record's payloadType is binary or json, not {payload_type!r}")
