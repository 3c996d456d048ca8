"""Throughput of the wire codecs: `uv run python -m bench.codec`.

Encodes and decodes Append record values (JSON and binary containers of 1, 10 and 100 events) and
`journal.action` headers; prints events (or headers) per second, best of a few rounds.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path

from kjournal.feed import AppendEvents
from kjournal.feed import AppendLines
from kjournal.feed import Position
from kjournal.feed import entry_to_json
from kjournal.feed.cursor import CursorFrame
from kjournal.feed.plain_json import plain_json_lines
from kjournal.model import AppendHeader
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import PayloadMetadata
from kjournal.model import PayloadType
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.read import event_records
from kjournal.wire import decode_action_header
from kjournal.wire import decode_events
from kjournal.wire import encode_action_header
from kjournal.wire import encode_events
from kjournal.wire.record import append_action
from kjournal_service.ndjson import ndjson_line
from kjournal_service.ndjson import ndjson_lines_sharing

from bench._host import cpu_model

SIZES = (1, 10, 100)
MIN_SECONDS = 0.3
ROUNDS = 3
BASELINE = Path(__file__).parent / "baselines" / "codec.json"

JSON_EVENT: dict[str, JsonValue] = {
    "type": "FundsDeposited",
    "amount": 12_500,
    "currency": "EUR",
    "reference": "c0ffee00-1234-4abc-9def-000000000042",
    "meta": {"by": "cashier-7", "channel": "web", "tags": ["vip", "promo"]},
}
BINARY_EVENT = bytes(range(100))
METADATA = PayloadMetadata(ExpireAfter.of(30, "days"), {"tenant": "t-1"})


def batch(size: int, binary: bool) -> Events:
    def payload(n: int) -> BinaryPayload | JsonPayload:
        if binary:
            return BinaryPayload(BINARY_EVENT)
        return JsonPayload({**JSON_EVENT, "seq": n})

    events = tuple(Event(SeqNr(n), frozenset({"deposit"}), payload(n)) for n in range(1, size + 1))
    return Events(events, METADATA)


def rate(operation: Callable[[], object]) -> float:
    """Calls per second, best of ROUNDS rounds of at least MIN_SECONDS each."""
    best = 0.0
    for _ in range(ROUNDS):
        calls = 0
        start = time.perf_counter()
        elapsed = 0.0
        while elapsed < MIN_SECONDS:
            for _ in range(10):
                operation()
            calls += 10
            elapsed = time.perf_counter() - start
        best = max(best, calls / elapsed)
    return best


def main() -> None:
    print("bench.codec: kjournal.wire encode/decode throughput")
    print(
        f"parameters: batch sizes {SIZES}; JSON events ~{len(json.dumps(JSON_EVENT))} B of JSON, "
        f"binary events {len(BINARY_EVENT)} B; one tag; metadata with expireAfter and data; "
        f"best of {ROUNDS} rounds of >= {MIN_SECONDS}s"
    )
    print(
        f"host: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()} "
        f"({platform.python_implementation()}) on {platform.system()} {platform.machine()}"
    )
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    print(f"baseline: {BASELINE if baseline else 'none recorded'}")
    print()
    print(f"{'container':<9} {'events':>6} {'bytes':>7} {'encode ev/s':>12} {'decode ev/s':>12}")
    for binary in (False, True):
        for size in SIZES:
            events = batch(size, binary)
            payload_type, data = encode_events(events)
            assert decode_events(payload_type, data) == events
            encode = rate(lambda events=events: encode_events(events))  # type: ignore[misc]
            decode = rate(lambda t=payload_type, d=data: decode_events(t, d))  # type: ignore[misc]
            name = "binary" if binary else "json"
            print(
                f"{name:<9} {size:>6} {len(data):>7} {encode * size:>12,.0f} {decode * size:>12,.0f}"
            )
    header = AppendHeader(
        SeqRange(SeqNr(1), SeqNr(100)),
        PayloadType.JSON,
        HeaderMetadata({"trace": "abc"}),
        origin="host-1",
        version="0.1.0",
    )
    raw = encode_action_header(header)
    print()
    print(
        f"journal.action header ({len(raw)} B): encode {rate(lambda: encode_action_header(header)):,.0f}/s, "
        f"decode {rate(lambda: decode_action_header(raw)):,.0f}/s"
    )
    feed_lines()


def feed_lines() -> None:
    """A topic feed's NDJSON lines of a 10-event append (the reader's catch-up encoding): each
    event made a FeedEvent with its Cursor and written on its own, against the lines written
    from the append with the record's members once (AppendEvents.lines_json)."""
    action = append_action(
        Key("topic", "journal-123"),
        datetime.now(UTC),
        batch(10, binary=False),
        headers={"h": "v"},
        origin="host-1",
    )
    events = event_records(action, 0, 1_000)
    frame = CursorFrame({p: Position(1_000 + p) for p in range(8)}, 0)
    delivered = AppendEvents("journal-123", events, tuple(range(len(events))), frame, 1_000)

    def each() -> bytes:
        return b"".join(ndjson_line(entry_to_json(entry)) for entry in delivered.entries())

    def sharing() -> bytes:
        return ndjson_lines_sharing(*delivered.lines_json())

    indexes = tuple(range(len(events)))

    def decoded_then_written() -> bytes:
        records = event_records(action, 0, 1_000)
        return ndjson_lines_sharing(
            *AppendEvents("journal-123", records, indexes, frame, 1_000).lines_json()
        )

    def plain_json() -> bytes:
        plain = plain_json_lines(action, PartitionOffset(0, 1_000))
        assert plain is not None
        lines = AppendLines("journal-123", *plain, indexes, frame, 1_000, tuple)
        return ndjson_lines_sharing(*lines.lines_json())

    print()
    print(
        f"feed lines of a 10-event append (8 partitions): a FeedEvent and its cursor made "
        f"and written per event {1e6 / (rate(each) * 10):.2f} µs per event, written from the "
        f"append (AppendEvents) {1e6 / (rate(sharing) * 10):.2f} µs per event"
    )
    print(
        f"  with the decoding: the append decoded, then written (AppendEvents) "
        f"{1e6 / (rate(decoded_then_written) * 10):.2f} µs per event, read from its plain JSON "
        f"container (AppendLines) {1e6 / (rate(plain_json) * 10):.2f} µs per event"
    )


if __name__ == "__main__":
    main()
