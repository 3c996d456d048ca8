"""`kjournal-dev trace`: a trace from the collector's file, as an indented waterfall.

The collector's file exporter writes one OTLP/JSON `ExportTraceServiceRequest` per line. A trace
is printed as its tree of spans (children under parents, in start order) with each span's
service, start offset from the trace's first span, duration, a bar on the trace's timeline and a
few attributes that say what it did; then the spans of other traces that link to it (the
replicator's, which applied its records) with their own children. Without a trace id, the latest
traces are listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from kjournal.spans import conventions as sem

__all__ = ["Span", "latest_traces", "read_spans", "render_trace"]

KINDS = {0: "", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}

# What a reader wants to see of a span, in this order, under short names.
SHOWN = (
    ("http.response.status_code", "status"),
    (sem.ACTION, "action"),
    (sem.SEQ_NR_FROM, "from"),
    (sem.SEQ_NR_TO, "to"),
    (sem.MESSAGING_PARTITION, "partition"),
    (sem.MESSAGING_KAFKA_OFFSET, "offset"),
    (sem.PARTITION, "partition"),
    (sem.MESSAGING_BATCH_COUNT, "records"),
    (sem.RECORDS, "records"),
    (sem.EVENTS, "events"),
    (sem.TAIL_ACTIONS, "tail actions"),
    (sem.DB_RETURNED_ROWS, "rows"),
    (sem.DB_BATCH_SIZE, "statements"),
    (sem.MICRO_BATCH_ID, "batch"),
    ("http.response.body.size", "bytes"),
    ("error.type", "error"),
)
BAR = 24


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    service: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[int, str, dict[str, Any]]]
    links: list[tuple[str, str]]  # (trace id, span id)
    error: bool
    instance: str = ""  # service.instance.id: which process
    link_attributes: list[dict[str, Any]] = field(default_factory=list)  # as `links`
    children: list[Span] = field(default_factory=list)

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)


def _value(value: dict[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    return None


def _attributes(items: Iterable[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _value(item.get("value", {})) for item in items or ()}


def _spans_of(document: dict[str, Any]) -> Iterator[Span]:
    for resource_spans in document.get("resourceSpans", []):
        resource = _attributes(resource_spans.get("resource", {}).get("attributes"))
        service = str(resource.get("service.name", "?"))
        instance = str(resource.get("service.instance.id", ""))
        for scope_spans in resource_spans.get("scopeSpans", []):
            for raw in scope_spans.get("spans", []):
                yield Span(
                    trace_id=raw.get("traceId", ""),
                    span_id=raw.get("spanId", ""),
                    parent_id=raw.get("parentSpanId", ""),
                    name=raw.get("name", ""),
                    kind=int(raw.get("kind", 0)),
                    service=service,
                    start_ns=int(raw.get("startTimeUnixNano", 0)),
                    end_ns=int(raw.get("endTimeUnixNano", 0)),
                    attributes=_attributes(raw.get("attributes")),
                    events=[
                        (
                            int(event.get("timeUnixNano", 0)),
                            event.get("name", ""),
                            _attributes(event.get("attributes")),
                        )
                        for event in raw.get("events", [])
                    ],
                    links=[
                        (link.get("traceId", ""), link.get("spanId", ""))
                        for link in raw.get("links", [])
                    ],
                    error=raw.get("status", {}).get("code") == 2,
                    instance=instance,
                    link_attributes=[
                        _attributes(link.get("attributes")) for link in raw.get("links", [])
                    ],
                )


def span_files(spans_dir: Path) -> list[Path]:
    """The collector's files, oldest first (rotated backups, then the current one)."""
    return sorted(spans_dir.glob("spans*.jsonl"), key=lambda path: path.stat().st_mtime)


def read_spans(spans_dir: Path, mentioning: str | None = None) -> list[Span]:
    """Every span in the collector's files; with `mentioning`, only from lines holding that
    text (a trace id: its spans and the spans linking to it), which skips parsing the rest."""
    found: list[Span] = []
    for path in span_files(spans_dir):
        with path.open(errors="replace") as lines:
            for line in lines:
                if mentioning is not None and mentioning not in line:
                    continue
                try:
                    found.extend(_spans_of(json.loads(line)))
                except (ValueError, TypeError, KeyError):
                    continue  # a line the collector was writing when we read it
    return found


def latest_traces(spans: list[Span], count: int = 20) -> list[Span]:
    """The root spans of the latest traces, oldest first."""
    known = {(span.trace_id, span.span_id) for span in spans}
    roots = [
        span for span in spans if not span.parent_id or (span.trace_id, span.parent_id) not in known
    ]
    firsts: dict[str, Span] = {}
    for root in roots:
        if root.trace_id not in firsts or root.start_ns < firsts[root.trace_id].start_ns:
            firsts[root.trace_id] = root
    return sorted(firsts.values(), key=lambda span: span.start_ns)[-count:]


def _tree(spans: list[Span]) -> list[Span]:
    """The roots of `spans` (one trace), each with its children in start order."""
    by_id = {span.span_id: span for span in spans}
    for span in spans:
        span.children = []
    roots: list[Span] = []
    for span in sorted(spans, key=lambda s: s.start_ns):
        parent = by_id.get(span.parent_id) if span.parent_id else None
        (parent.children if parent is not None else roots).append(span)
    return roots


def _ms(ns: int) -> str:
    return f"{ns / 1e6:,.1f} ms" if ns < 10_000_000_000 else f"{ns / 1e9:,.2f} s"


def _shown(span: Span) -> str:
    seen: set[str] = set()
    parts = []
    for key, label in SHOWN:
        if key in span.attributes and label not in seen:
            seen.add(label)
            parts.append(f"{label}={span.attributes[key]}")
    return " ".join(parts)


def _bar(start: int, duration: int, origin: int, total: int) -> str:
    if total <= 0:
        return " " * BAR
    left = min(BAR - 1, int((start - origin) / total * BAR))
    width = max(1, round(duration / total * BAR))
    width = min(width, BAR - left)
    return " " * left + "█" * width + " " * (BAR - left - width)


def _lines(span: Span, depth: int, origin: int, total: int) -> Iterator[str]:
    kind = KINDS.get(span.kind, "")
    mark = "✗ " if span.error else ""
    service = span.service.removeprefix("kjournal-")
    yield (
        f"{_ms(span.start_ns - origin):>11} {_ms(span.duration_ns):>11}  "
        f"{_bar(span.start_ns, span.duration_ns, origin, total)}  {service:<10} "
        f"{'  ' * depth}{mark}{span.name}"
        + (f" [{kind}]" if kind and kind != "internal" else "")
        + (f"  {_shown(span)}" if _shown(span) else "")
    )
    for at, name, attributes in span.events:
        details = " ".join(
            f"{key}={value}"
            for key, value in attributes.items()
            if not key.startswith("exception.stacktrace")
        )
        yield f"{_ms(at - origin):>11} {'':>11}  {'':<{BAR}}  {'':<10} {'  ' * depth}  • {name} {details}".rstrip()
    for child in span.children:
        yield from _lines(child, depth + 1, origin, total)


def render_trace(trace_id: str, spans: list[Span]) -> list[str]:
    """The waterfall of `trace_id` (and of the spans linking to it) as lines of text."""
    trace_id = trace_id.lower()
    own = [span for span in spans if span.trace_id == trace_id]
    if not own:
        return []
    linking = [
        span
        for span in spans
        if span.trace_id != trace_id and any(t == trace_id for t, _ in span.links)
    ]
    # A linking span's subtree: its descendants in its own trace.
    others: dict[str, list[Span]] = {}
    for span in spans:
        if span.trace_id != trace_id:
            others.setdefault(span.trace_id, []).append(span)
    linked_roots: list[Span] = []
    for span in linking:
        _tree(others[span.trace_id])
        linked_roots.append(span)
    everything = own + [s for root in linked_roots for s in _walk(root)]
    origin = min(span.start_ns for span in everything)
    total = max(span.end_ns for span in everything) - origin
    services = sorted({span.service.removeprefix("kjournal-") for span in everything})
    lines = [
        f"trace {trace_id}: {len(own)} spans"
        + (f", {len(linking)} linked from other traces" if linking else "")
        + f"; {', '.join(services)}; {_ms(total)}",
        f"{'start':>11} {'duration':>11}  {'':<{BAR}}  {'service':<10} span",
    ]
    for root in _tree(own):
        lines.extend(_lines(root, 0, origin, total))
    for root in sorted(linked_roots, key=lambda s: s.start_ns):
        lines.append(
            f"linked: {root.service.removeprefix('kjournal-')} applied records of this trace "
            f"(its trace {root.trace_id}, links {len(root.links)})"
        )
        lines.extend(_lines(root, 0, origin, total))
    return lines


def _walk(span: Span) -> Iterator[Span]:
    yield span
    for child in span.children:
        yield from _walk(child)
