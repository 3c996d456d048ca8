"""How the CLI shows things: one line per event, key/value status, a progress bar on stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from typing import Protocol
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn
from rich.progress import MofNCompleteColumn
from rich.progress import Progress
from rich.progress import ProgressColumn
from rich.progress import SpinnerColumn
from rich.progress import Task
from rich.progress import TextColumn
from rich.progress import TimeElapsedColumn
from rich.text import Text

from kjournal.api.convert import event_record_to_json
from kjournal.api.convert import format_timestamp
from kjournal.api.feed_items import FeedItem
from kjournal.model import BinaryPayload
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import TextPayload
from kjournal.model.durations import format_duration
from kjournal.model.results import AppendResult
from kjournal.model.results import JournalStatus

PAYLOAD_WIDTH = 100


def payload_text(record: EventRecord) -> str:
    payload = record.event.payload
    if payload is None:
        return "-"
    if isinstance(payload, BinaryPayload):
        return f"<{len(payload.value)} bytes>"
    if isinstance(payload, TextPayload):
        text = json.dumps(payload.value, ensure_ascii=False)
    else:
        assert isinstance(payload, JsonPayload)
        text = json.dumps(payload.value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= PAYLOAD_WIDTH else text[: PAYLOAD_WIDTH - 1] + "…"


def event_line(record: EventRecord, fmt: str) -> str:
    if fmt == "ndjson":
        return json.dumps(event_record_to_json(record), ensure_ascii=False, separators=(",", ":"))
    payload = record.event.payload
    kind = payload.type.value if payload is not None else "-"
    tags = ",".join(sorted(record.event.tags)) or "-"
    position = f"{record.partition_offset.partition}:{record.partition_offset.offset}"
    return (
        f"{record.seq_nr:>8}  {format_timestamp(record.timestamp)}  {position:<10}  "
        f"{kind:<6}  {tags:<10}  {payload_text(record)}"
    )


def feed_line(item: FeedItem, fmt: str) -> str:
    """An item of a topic feed (not a heartbeat): an event as `event_line` prints it, after its
    journal id; a control entry as its type, journal id and position."""
    if fmt == "ndjson":
        value: dict[str, Any] = {"type": item.type, "id": item.id}
        if item.record is not None:
            value.update(event_record_to_json(item.record), index=item.index)
        else:
            value.update(partition=item.partition, offset=item.offset)
            value.update({k: v for k, v in (("to", item.to), ("reason", item.reason)) if v})
        value["cursor"] = item.cursor
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if item.record is not None:
        return f"{item.id}  {event_line(item.record, fmt)}"
    detail = f"to {item.to}" if item.to is not None else item.reason or ""
    return f"{item.id}  {item.type}  {item.partition}:{item.offset}  {detail}".rstrip()


def status_lines(status: JournalStatus) -> list[tuple[str, str]]:
    expiry = status.expiry
    return [
        ("journal", str(status.key)),
        ("seqNr", str(status.seq_nr)),
        ("deleteTo", "-" if status.delete_to is None else str(status.delete_to)),
        ("expiry", "-" if expiry is None else f"{format_duration(expiry.after)}, on {expiry.on}"),
        ("partition", str(status.partition)),
        ("end offset", str(status.end_offset)),
        ("pointer2", "-" if status.pointer2 is None else str(status.pointer2)),
        ("unreplicated actions", str(status.unreplicated_actions)),
        ("unreplicated offsets", str(status.unreplicated_offsets)),
        ("unreplicated duplicates", str(status.unreplicated_duplicates)),
        ("conflicts", _conflicts(status)),
        ("quarantine", "checked" if status.quarantine_known else "unknown (no quarantine table)"),
    ]


def _conflicts(status: JournalStatus) -> str:
    if status.conflicts is None:
        return "unknown (no conflicts table)"
    if not status.conflicts:
        return "none"
    shown = ", ".join(
        f"seqNr {c.seq_nr} at offset {c.dropped.offset} (kept: offset {c.kept.offset})"
        for c in status.conflicts[:3]
    )
    more = len(status.conflicts) - 3
    return shown + (f", and {more} more" if more > 0 else "")


def append_line(result: AppendResult) -> str:
    position = result.partition_offset
    what = "already appended (a replay)" if result.replay else "appended"
    return (
        f"{what} seqNr {result.range} at partition {position.partition} offset "
        f"{position.offset} ({format_timestamp(result.timestamp)})"
    )


def key_values(lines: list[tuple[str, str]], out: TextIO) -> None:
    width = max(len(name) for name, _ in lines) + 2
    for name, value in lines:
        out.write(f"{name:<{width}}{value}\n")


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} events/s")


class Advance(Protocol):
    def __call__(self, count: int = 1) -> None: ...


@contextmanager
def progress(total: int | None, label: str, enabled: bool) -> Iterator[Advance]:
    """A transient progress bar on stderr (only when it is a terminal and `enabled`)."""
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:

        def ignore(count: int = 1) -> None:
            return None

        yield ignore
        return
    columns = [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)

        def advance(count: int = 1) -> None:
            bar.advance(task, count)

        yield advance
