"""The catch-up's shortcut for an append in a plain JSON container: its events' line members read
straight from the container's JSON, without an Event and an EventRecord per event.

`plain_json_lines` answers only where it gives exactly what the full path gives
(`wire.append_events.decode_append`, then `api.convert.event_json` and `record_json`): every
event an object with an integer seqNr, strictly increasing from the header's first seqNr to its
last; tags an array of strings; a json payload, none, or a text payload that is a string. For
anything else it answers None and the caller decodes the append the full way, which takes it or
says what is wrong with it. tests/unit/feed/test_plain_json.py holds the two paths to the same
lines.
"""

from __future__ import annotations

from typing import Any

from kjournal.api.convert import append_record_json
from kjournal.errors import InvalidInput
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Append
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import RecordMetadata
from kjournal.wire import json_text
from kjournal.wire.metadata_json import payload_metadata_from_value

__all__ = ["plain_json_lines"]

_EMPTY_METADATA = PayloadMetadata()


def plain_json_lines(
    append: Append, position: PartitionOffset
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(the members every event's line shares: its record's; each event's own: seqNr, tags,
    payloadType, payload), or None where the full path must decode the append."""
    header = append.header
    if header.payload_type is not PayloadType.JSON:
        return None
    try:
        root = json_text.loads(append.payload)
    except ValueError:
        return None
    if type(root) is not dict:
        return None
    raws = root.get("events")
    if type(raws) is not list or not raws:
        return None
    metadata = root.get("metadata")
    try:
        payload_metadata = (
            _EMPTY_METADATA if metadata is None else payload_metadata_from_value(metadata)
        )
    except (ValueError, InvalidInput):
        return None
    own: list[dict[str, Any]] = []
    previous = 0
    for raw in raws:
        if type(raw) is not dict:
            return None
        seq_nr = raw.get("seqNr")
        if type(seq_nr) is not int or not previous < seq_nr <= SEQ_NR_MAX:
            return None
        previous = seq_nr
        tags: Any = raw.get("tags")
        if type(tags) is not list:
            return None
        if len(tags) > 1:
            if not all(type(tag) is str for tag in tags):
                return None
            tags = sorted(set(tags))
        elif tags and type(tags[0]) is not str:
            return None
        kind = raw.get("payloadType")
        value = raw.get("payload")
        if value is None:
            if kind is not None and kind != "json" and kind != "text":
                return None
            kind = None
        elif kind is None or kind == "json":
            kind = "json"
        elif kind != "text" or type(value) is not str:
            return None
        own.append(
            {
                "seqNr": seq_nr,
                "tags": tags,
                "payloadType": kind,
                "payload": value,
            }
        )
    seq_nrs = header.range
    if own[0]["seqNr"] != seq_nrs.from_ or previous != seq_nrs.to:
        return None
    shared = append_record_json(
        append.timestamp,
        position,
        RecordMetadata(header.metadata, payload_metadata),
        append.headers,
        header.origin,
        header.version,
    )
    return shared, own
