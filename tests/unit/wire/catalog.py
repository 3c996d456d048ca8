"""Expected values for the golden files in tests/fixtures/wire (see its README)."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from pathlib import Path

from kjournal.model import ActionHeader
from kjournal.model import AppendHeader
from kjournal.model import BinaryPayload
from kjournal.model import DeleteHeader
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import MarkHeader
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import PurgeHeader
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload

FIXTURES = Path(__file__).parents[2] / "fixtures" / "wire"

EMPTY = PayloadMetadata()
# As the Scala format specs: expireAfter 1 day and data {"key": "value"}.
METADATA = PayloadMetadata(ExpireAfter.of(1, "day"), {"key": "value"})


def read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def event(seq_nr: int, payload: Payload | None = None) -> Event:
    """Event n tagged "0".."n", as in the Scala specs."""
    return Event(SeqNr(seq_nr), frozenset(str(i) for i in range(seq_nr + 1)), payload)


def binary(text: str) -> BinaryPayload:
    return BinaryPayload(text.encode())


def text(value: str) -> TextPayload:
    return TextPayload(value)


def json(value: object) -> JsonPayload:
    return JsonPayload(value)  # type: ignore[arg-type]


def events(*items: Event, metadata: PayloadMetadata = EMPTY) -> Events:
    return Events(items, metadata)


_MIXED = (event(1), event(2, binary("binary")), event(3, text("text")), event(4, json("json")))

# Record values: (record payloadType, events); decoded, and re-encoded by encode_events.
PAYLOADS: dict[str, tuple[PayloadType, Events]] = {
    "Payload-empty.json": (PayloadType.JSON, events(event(1))),
    "Payload-binary.bin": (PayloadType.BINARY, events(event(1, binary("payload")))),
    "Payload-text.json": (PayloadType.JSON, events(event(1, text(' {"key":"value"} ')))),
    "Payload-json.json": (PayloadType.JSON, events(event(1, json("payload")))),
    "Payload-empty-many.json": (PayloadType.JSON, events(event(1), event(2), metadata=METADATA)),
    "Payload-binary-many.bin": (
        PayloadType.BINARY,
        events(event(1, binary("1")), event(2, binary("2")), metadata=METADATA),
    ),
    "Payload-text-many.json": (
        PayloadType.JSON,
        events(event(1, text("1")), event(2, text("2")), metadata=METADATA),
    ),
    "Payload-json-many.json": (
        PayloadType.JSON,
        events(event(1, json("1")), event(2, json("2")), metadata=METADATA),
    ),
    "Payload-empty-binary-text-json.bin": (PayloadType.BINARY, events(*_MIXED, metadata=METADATA)),
    "Payload-json-unicode.json": (
        PayloadType.JSON,
        events(
            event(
                1,
                json(
                    {
                        "name": "café ключ 日本 😀",
                        "ctl": 'a\nb\tc\x01\x7f"\\/',
                        "n": [0, -1, 2.5, 12345678901234567890, True, None],
                    }
                ),
            ),
            event(2, text("ünïcödé\u2028 and \x1f")),
            metadata=PayloadMetadata(ExpireAfter.of(30, "minute"), {"nested": {"deep": [{}]}}),
        ),
    ),
    "Payload-binary-json-null.bin": (
        PayloadType.BINARY,
        events(
            event(1, BinaryPayload(bytes(range(256)))),
            event(2, JsonPayload(None)),
            metadata=PayloadMetadata(ExpireAfter.of(60, "minute")),
        ),
    ),
}

# Record values only ever read: v0 JSON (no metadata) and lenient spellings.
PAYLOADS_DECODE_ONLY: dict[str, tuple[PayloadType, Events]] = {
    **{
        name.replace("Payload-", "Payload-v0-"): (payload_type, Events(value.events, EMPTY))
        for name, (payload_type, value) in PAYLOADS.items()
        if name.endswith(".json") and "unicode" not in name
    },
    "Payload-expire-millis.json": (
        PayloadType.JSON,
        events(event(1), metadata=PayloadMetadata(ExpireAfter.of(1, "day"))),
    ),
    "Payload-expire-hours-spaced.json": (
        PayloadType.JSON,
        events(event(1), metadata=PayloadMetadata(ExpireAfter.of(36, "hour"))),
    ),
    "Payload-implicit-json.json": (
        PayloadType.JSON,
        events(Event(SeqNr(1), payload=json({"a": 1})), Event(SeqNr(2))),
    ),
}

# The binary codec on its own (any payload mix), as the Scala EventsToBytesSpec.
BINARY_CONTAINERS: dict[str, Events] = {
    "empty": events(event(1)),
    "binary": events(event(1, binary("binary"))),
    "text": events(event(1, text("text"))),
    "json": events(event(1, json("json")), metadata=METADATA),
    "empty-many": events(event(1), event(2), event(3), metadata=METADATA),
    "binary-many": events(*(event(n, binary(str(n))) for n in (1, 2, 3)), metadata=METADATA),
    "text-many": events(*(event(n, text(str(n))) for n in (1, 2, 3)), metadata=METADATA),
    "json-many": events(*(event(n, json(str(n))) for n in (1, 2, 3)), metadata=METADATA),
    "empty-binary-text-json": events(*_MIXED, metadata=METADATA),
}


def _append(origin: str | None, payload_type: PayloadType, data: object) -> AppendHeader:
    return AppendHeader(
        range=SeqRange(SeqNr(1), SeqNr(5)),
        payload_type=payload_type,
        metadata=HeaderMetadata(data),  # type: ignore[arg-type]
        origin=origin,
    )


HEADERS: dict[str, ActionHeader] = {
    "Append-origin-version-Json-metadata.json": AppendHeader(
        range=SeqRange(SeqNr(1), SeqNr(5)),
        payload_type=PayloadType.JSON,
        metadata=HeaderMetadata([1, "two", None]),
        origin="origin",
        version="11.0.0",
    ),
}
HEADERS_DECODE_ONLY: dict[str, ActionHeader | None] = {
    "Append-origin-Json-metadata-not-object.json": _append("origin", PayloadType.JSON, None),
    "Unknown-action.json": None,
}
for _origin in ("origin", None):
    _name = _origin or "None"
    for _type in (PayloadType.BINARY, PayloadType.JSON):
        _prefix = f"Append-{_name}-{_type.value.capitalize()}"
        HEADERS[f"{_prefix}-metadata.json"] = _append(_origin, _type, {"key": "value"})
        HEADERS[f"{_prefix}-none.json"] = _append(_origin, _type, None)
        HEADERS_DECODE_ONLY[f"{_prefix}-legacy.json"] = _append(_origin, _type, None)
    HEADERS[f"Delete-{_name}.json"] = DeleteHeader(SeqNr(3), _origin, "0.0.1")
    HEADERS[f"Purge-{_name}.json"] = PurgeHeader(_origin)
    HEADERS[f"Mark-{_name}.json"] = MarkHeader("id", _origin)

# Whole records (Record-*.json): the events of each append's value.
RECORD_TIMESTAMP = datetime(2023, 11, 14, 22, 13, 20, 123_000, tzinfo=UTC)
RECORD_EVENTS: dict[str, Events] = {
    "append-json": PAYLOADS["Payload-json-many.json"][1],
    "append-text": PAYLOADS["Payload-text-many.json"][1],
    "append-binary": PAYLOADS["Payload-binary-many.bin"][1],
    "append-mixed": PAYLOADS["Payload-empty-binary-text-json.bin"][1],
    "append-empty": PAYLOADS["Payload-empty-many.json"][1],
}
