"""What a fault must never do, counted: every acknowledged event readable exactly once, in order,
with the payload it was appended with, before and after replication, and the two reads equal.

`Reads` holds what the reader returned per journal: (seqNr, payload) in stream order, or the
error that made the journal unreadable. `tally` compares them with the ledger of acknowledged
appends; `table` renders one row per scenario. Pure logic, so tests/unit checks that it does see
a lost, doubled or reordered event.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from kjournal.model import JsonValue
from kjournal.model import Key

__all__ = ["ReadEvents", "Reads", "Tally", "table", "tally"]

ReadEvents = list[tuple[int, JsonValue]]
Reads = Mapping[Key, ReadEvents | Exception]


@dataclass
class Tally:
    scenario: str
    acknowledged: int = 0  # acknowledged events
    found: int = 0  # acknowledged events read back, once each, with their payload
    missing: int = 0
    duplicated: int = 0  # extra copies of a seqNr in one read
    out_of_order: int = 0  # events not above the one before them
    wrong_payload: int = 0
    unreadable: int = 0  # journals whose read failed
    differ: int = 0  # journals read differently before and after replication
    unacknowledged: int = 0  # sent, never acknowledged (the outcome a client did not learn)
    errors: Counter[str] = field(default_factory=Counter)  # failed attempts clients saw
    restarted: str = ""  # what the platform brought back during the scenario

    @property
    def clean(self) -> bool:
        return not (
            self.missing
            or self.duplicated
            or self.out_of_order
            or self.wrong_payload
            or self.unreadable
            or self.differ
        )


def tally(
    scenario: str,
    acknowledged: Mapping[Key, Mapping[int, JsonValue]],
    before: Reads,
    after: Reads,
    errors: Counter[str] | None = None,
    unacknowledged: int = 0,
) -> Tally:
    """The counts of `after` (the read once replication caught up) against the acknowledged
    events; `before` (the read right after the load) must have been the same."""
    result = Tally(scenario, unacknowledged=unacknowledged, errors=Counter(errors or {}))
    for key, expected in acknowledged.items():
        result.acknowledged += len(expected)
        read = after.get(key, KeyError(f"{key} was not read"))
        if before.get(key) != read:
            result.differ += 1
        if isinstance(read, Exception):
            result.unreadable += 1
            result.missing += len(expected)
            continue
        _count_journal(result, expected, read)
    return result


def _count_journal(result: Tally, expected: Mapping[int, JsonValue], read: ReadEvents) -> None:
    seen: Counter[int] = Counter(seq_nr for seq_nr, _ in read)
    result.duplicated += sum(copies - 1 for copies in seen.values())
    result.out_of_order += sum(
        1 for (earlier, _), (later, _) in itertools.pairwise(read) if later <= earlier
    )
    payloads = dict(read)  # the last copy of a doubled seqNr: doubled is counted already
    for seq_nr, payload in expected.items():
        if seq_nr not in payloads:
            result.missing += 1
        elif payloads[seq_nr] != payload:
            result.wrong_payload += 1
        else:
            result.found += 1


COLUMNS = (
    "scenario",
    "acknowledged",
    "found",
    "missing",
    "duplicated",
    "out of order",
    "wrong payload",
    "unreadable",
    "before≠after",
    "unacknowledged",
    "errors clients saw (by status)",
    "restarted",
)


def _row(t: Tally) -> list[str]:
    errors = ", ".join(f"{name}×{count}" for name, count in sorted(t.errors.items())) or "none"
    numbers = (
        t.acknowledged,
        t.found,
        t.missing,
        t.duplicated,
        t.out_of_order,
        t.wrong_payload,
        t.unreadable,
        t.differ,
        t.unacknowledged,
    )
    return [t.scenario, *(str(n) for n in numbers), errors, t.restarted or "-"]


def table(tallies: Iterable[Tally]) -> str:
    """A Markdown table, one row per scenario."""
    rows = [list(COLUMNS), *(_row(t) for t in tallies)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
