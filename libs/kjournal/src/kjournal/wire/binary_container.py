"""The binary container: an Append record value when any event is binary (record payloadType
"binary"). Big-endian, as the Scala library's scodec codecs:

    uint8   version                      written as 1
    int32   event count                  > 0
    per event:
      int32 byte length of the event, then the event:
        int64 seqNr
        int32 byte length of the tags, then per tag: int32 length + UTF-8
        uint8 payload kind               0 none, 1 binary, 2 json (UTF-8 JSON text), 3 text (UTF-8)
        int32 payload length + bytes     (length 0 for none)
    version 1 only: the rest is the PayloadMetadata JSON, e.g. `{}` (no length prefix)

Reading is as lenient as the Scala reader: version 0 has no metadata; any other first byte is
skipped and read as version 0; version 1 metadata that does not parse reads as empty metadata;
bytes left over inside an event's length, or after the events in version 0, are ignored.
"""

from __future__ import annotations

import struct

from kjournal.errors import InvalidDuration
from kjournal.errors import InvalidInput
from kjournal.errors import InvalidPayload
from kjournal.errors import PayloadFormatError
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal.wire import json_text
from kjournal.wire.metadata_json import payload_metadata_from_value
from kjournal.wire.metadata_json import payload_metadata_to_value
from kjournal.wire.tag_order import scala_tag_order

VERSION = 1

_INT32 = struct.Struct(">i")
_VERSION_COUNT = struct.Struct(">Bi")
_EVENT_START = struct.Struct(">iqi")  # event length, seqNr, tags length
_SEQ_NR_TAGS = struct.Struct(">qi")
_PAYLOAD_START = struct.Struct(">Bi")  # kind, length

_NONE, _BINARY, _JSON, _TEXT = 0, 1, 2, 3
_NO_TAGS: frozenset[str] = frozenset()
_EMPTY_METADATA = PayloadMetadata()


def encode_binary_container(events: Events) -> bytes:
    """Encode events as a version 1 binary container; InvalidPayload if a value cannot be."""
    try:
        parts = [_VERSION_COUNT.pack(VERSION, len(events.events))]
        for event in events.events:
            tags = (
                b"".join(_string(tag) for tag in scala_tag_order(event.tags)) if event.tags else b""
            )
            kind, body = _payload(event.payload)
            # seqNr 8 + tags length 4 + tags + kind 1 + payload length 4 + payload
            size = 17 + len(tags) + len(body)
            parts.append(_EVENT_START.pack(size, event.seq_nr, len(tags)))
            parts.append(tags)
            parts.append(_PAYLOAD_START.pack(kind, len(body)))
            parts.append(body)
        parts.append(json_text.dump_bytes(payload_metadata_to_value(events.metadata)))
    except (ValueError, struct.error) as exc:
        raise InvalidPayload(f"events cannot be written as a binary container: {exc}") from exc
    return b"".join(parts)


def decode_binary_container(data: bytes) -> Events:
    """Decode version 1 or 0 (or, skipping the first byte, anything else laid out as version 0)."""
    data = bytes(data)
    try:
        if not data:
            raise ValueError("empty value")
        events, end = _read_events(data, 1)
        return Events(events, _read_metadata(data, end) if data[0] == VERSION else _EMPTY_METADATA)
    except (ValueError, InvalidInput) as exc:
        raise PayloadFormatError(f"invalid binary container: {exc}") from exc


def _read_metadata(data: bytes, start: int) -> PayloadMetadata:
    try:
        return payload_metadata_from_value(json_text.loads(data[start:]))
    except (ValueError, InvalidDuration):
        # The Scala reader then falls back to reading the version 0 layout: no metadata.
        return _EMPTY_METADATA


def _string(value: str) -> bytes:
    encoded = value.encode("utf-8")
    return _INT32.pack(len(encoded)) + encoded


def _payload(payload: Payload | None) -> tuple[int, bytes]:
    if payload is None:
        return _NONE, b""
    if isinstance(payload, BinaryPayload):
        return _BINARY, bytes(payload.value)
    if isinstance(payload, TextPayload):
        return _TEXT, payload.value.encode("utf-8")
    return _JSON, json_text.dump_bytes(payload.value)


def _read_events(data: bytes, pos: int) -> tuple[tuple[Event, ...], int]:
    limit = len(data)
    if pos + 4 > limit:
        raise ValueError("truncated before the event count")
    (count,) = _INT32.unpack_from(data, pos)
    pos += 4
    if count <= 0:
        raise ValueError(f"event count must be positive, got {count}")
    events: list[Event] = []
    for index in range(count):
        if pos + 4 > limit:
            raise ValueError(f"truncated: event {index} of {count} is missing")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > limit:
            raise ValueError(f"event {index} claims {size} bytes, {limit - pos} are left")
        events.append(_read_event(data, pos, pos + size, index))
        pos += size
    return tuple(events), pos


def _read_event(data: bytes, pos: int, end: int, index: int) -> Event:
    if pos + 12 > end:
        raise ValueError(f"event {index} is too short for a seqNr and tags")
    seq_nr, tags_size = _SEQ_NR_TAGS.unpack_from(data, pos)
    pos += 12
    tags_end = pos + tags_size
    if tags_size < 0 or tags_end > end:
        raise ValueError(f"event {index}: tags claim {tags_size} bytes, {end - pos} are left")
    tags: frozenset[str] = _NO_TAGS
    if tags_size:
        names: list[str] = []
        while pos < tags_end:
            if pos + 4 > tags_end:
                raise ValueError(f"event {index}: truncated tag length")
            (length,) = _INT32.unpack_from(data, pos)
            pos += 4
            if length < 0 or pos + length > tags_end:
                raise ValueError(f"event {index}: tag claims {length} bytes, {tags_end - pos} left")
            names.append(data[pos : pos + length].decode("utf-8"))
            pos += length
        tags = frozenset(names)
    if pos + 5 > end:
        raise ValueError(f"event {index} is too short for its payload kind and length")
    kind, length = _PAYLOAD_START.unpack_from(data, pos)
    pos += 5
    if length < 0 or pos + length > end:
        raise ValueError(f"event {index}: payload claims {length} bytes, {end - pos} are left")
    payload: Payload | None
    if kind == _BINARY:
        payload = BinaryPayload(data[pos : pos + length])
    elif kind == _JSON:
        payload = JsonPayload(json_text.loads(data[pos : pos + length]))
    elif kind == _TEXT:
        payload = TextPayload(data[pos : pos + length].decode("utf-8"))
    elif kind == _NONE:
        payload = None
    else:
        raise ValueError(f"event {index}: unknown payload kind {kind}")
    return Event(SeqNr(seq_nr), tags, payload)
