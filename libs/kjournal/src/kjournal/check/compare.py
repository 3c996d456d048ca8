"""One journal's stored state against the fold's: pure, every difference named.

Rows are matched by their clustering key (seqNr, timestamp): a row of the fold without a stored
match is missing, a stored row without a match in the fold is extra (or, when its Kafka offset is
that of an append of the journal the fold did not take, an event of a dropped append), and a
matched pair whose events differ is changed. The head's fields are compared one by one, the
expiry within what replication times allow: `expire_on` is the date of (replication time +
expireAfter), and a record is replicated after it was written and before the comparison.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import tzinfo

from kjournal.check.findings import Finding
from kjournal.check.findings import Kind
from kjournal.check.findings import seq_ranges
from kjournal.check.state import ExpectedJournal
from kjournal.check.state import StoredJournal
from kjournal.fold.plan import expire_on
from kjournal.memory import StoredRow
from kjournal.model import EventRecord
from kjournal.model.head import Expiry
from kjournal.model.head import JournalHead

__all__ = [
    "compare",
    "expected_rows",
    "expiry_window",
    "row_key",
    "segments_to_read",
    "target_size",
]

RowKey = tuple[int, int, datetime]


def row_key(row: StoredRow) -> RowKey:
    """Where a row sits: its segment and clustering key (seqNr, timestamp)."""
    return (row.segment, row.event.seq_nr, row.event.timestamp)


def target_size(expected: ExpectedJournal, stored: StoredJournal, default: int) -> int:
    """The segment size readers use for the journal: its stored head's, else the fold's."""
    if stored.head is not None:
        return stored.head.segment_size
    if expected.head is not None:
        return expected.head.segment_size
    return default


def expected_rows(expected: ExpectedJournal, size: int) -> dict[RowKey, StoredRow]:
    """The fold's rows by where they belong in segments of `size`."""
    rows = {}
    for row in expected.rows:
        placed = StoredRow(row.event, row.meta_record_id, (row.event.seq_nr - 1) // size)
        rows[row_key(placed)] = placed
    return rows


def compare(
    expected: ExpectedJournal,
    stored: StoredJournal,
    *,
    now: datetime | None = None,
    expiry_zone: tzinfo = UTC,
) -> list[Finding]:
    """Every difference between the stored journal and the fold's (empty: the same).

    now: the time of the comparison (after the store was read): the latest replication time.
    """
    now = now or datetime.now(UTC)
    findings: list[Finding] = []
    if len(stored.heads.buckets) > 1:
        findings.append(
            Finding(
                Kind.HEAD_TWICE,
                f"heads in metajournal buckets {', '.join(map(str, stored.heads.buckets))}; "
                "readers see only the current layout's",
            )
        )
    findings += _heads(expected, stored.head, now, expiry_zone)
    findings += _rows(expected, stored)
    return findings


def _heads(
    expected: ExpectedJournal, stored: JournalHead | None, now: datetime, zone: tzinfo
) -> list[Finding]:
    fold = expected.head
    if fold is None and stored is None:
        return []
    if stored is None:
        assert fold is not None
        return [Finding(Kind.HEAD_MISSING, f"no head; the fold's: {_head(fold)}")]
    if fold is None:
        last = expected.records[-1] if expected.records else None
        why = (
            f"purged at offset {last.offset}"
            if last is not None and last.kind == "purge"
            else "no journal in Kafka's records"
            if last is None
            else "the fold leaves no journal"
        )
        return [Finding(Kind.HEAD_UNEXPECTED, f"{_head(stored)}; {why}")]
    findings = []
    if stored.seq_nr != fold.seq_nr:
        findings.append(
            Finding(Kind.HEAD_SEQ_NR, f"seqNr {stored.seq_nr}, the fold's {fold.seq_nr}")
        )
    if stored.delete_to != fold.delete_to:
        findings.append(
            Finding(
                Kind.HEAD_DELETE_TO,
                f"deleteTo {_maybe(stored.delete_to)}, the fold's {_maybe(fold.delete_to)}",
            )
        )
    if stored.partition_offset != fold.partition_offset:
        findings.append(
            Finding(
                Kind.HEAD_OFFSET,
                f"at {_position(stored)}, the fold's {_position(fold)}",
            )
        )
    expiry = _expiry(expected, stored.expiry, now, zone)
    if expiry is not None:
        findings.append(Finding(Kind.HEAD_EXPIRY, expiry))
    return findings


def expiry_window(
    expected: ExpectedJournal, now: datetime, zone: tzinfo
) -> tuple[date, date] | None:
    """The `expire_on` dates replication could have written for the fold's expiry: from the
    latest record the head covers (replicated no earlier than it was written) to `now`."""
    fold = expected.head
    if fold is None or fold.expiry is None:
        return None
    after = fold.expiry.after
    covered = fold.partition_offset.offset
    times = [
        row.event.timestamp for row in expected.rows if row.event.partition_offset.offset <= covered
    ]
    if not times:
        times = [info.timestamp for info in expected.records if info.timestamp is not None]
    high = expire_on(after, now, zone)
    low = expire_on(after, max(times), zone) if times else high
    return min(low, high), high


def _expiry(
    expected: ExpectedJournal, stored: Expiry | None, now: datetime, zone: tzinfo
) -> str | None:
    fold = expected.head.expiry if expected.head is not None else None
    if fold is None and stored is None:
        return None
    if fold is None:
        assert stored is not None
        return f"expires on {stored.on} (after {stored.after}); the fold's journal never expires"
    if stored is None:
        return f"never expires; the fold's expires {fold.after} after its last replication"
    if stored.after != fold.after:
        return f"expireAfter {stored.after}, the fold's {fold.after}"
    window = expiry_window(expected, now, zone)
    assert window is not None
    low, high = window
    if not low <= stored.on <= high:
        return f"expires on {stored.on}, outside the dates replication could give ({low} to {high})"
    return None


def _rows(expected: ExpectedJournal, stored: StoredJournal) -> list[Finding]:
    fold = expected_rows(expected, target_size(expected, stored, 1))
    held = {row_key(row): row for row in stored.rows}
    missing = [key for key in fold if key not in held]
    extra = [key for key in held if key not in fold]
    changed = [key for key in fold if key in held and fold[key].event != held[key].event]
    findings = []
    if missing:
        findings.append(
            Finding(
                Kind.EVENTS_MISSING,
                f"{len(missing)} events of Kafka's records are not stored: seqNrs "
                f"{seq_ranges([seq for _, seq, _ in missing])}",
            )
        )
    if changed:
        first = changed[0]
        fields = ", ".join(_differing(fold[first].event, held[first].event))
        findings.append(
            Finding(
                Kind.EVENTS_CHANGED,
                f"{len(changed)} stored events differ from their records: seqNrs "
                f"{seq_ranges([seq for _, seq, _ in changed])} (seqNr {first[1]}: {fields})",
            )
        )
    appended = {info.offset for info in expected.records if info.kind == "append"}
    taken = {row.event.partition_offset.offset for row in expected.rows}
    dropped: dict[int, list[int]] = {}
    strays = []
    for key in extra:
        offset = held[key].event.partition_offset.offset
        if offset in appended and offset not in taken:
            dropped.setdefault(offset, []).append(key[1])
        else:
            strays.append(key[1])
    for offset, seq_nrs in sorted(dropped.items()):
        findings.append(
            Finding(
                Kind.EVENTS_DROPPED,
                f"{len(seq_nrs)} events of the append at offset {offset}, which the append rule "
                f"dropped, are stored: seqNrs {seq_ranges(seq_nrs)}",
            )
        )
    if strays:
        findings.append(
            Finding(
                Kind.EVENTS_EXTRA,
                f"{len(strays)} stored events are in no record of the fold: seqNrs "
                f"{seq_ranges(strays)}",
            )
        )
    order = _order(stored)
    if order is not None:
        findings.append(Finding(Kind.EVENTS_ORDER, order))
    return findings


def _order(stored: StoredJournal) -> str | None:
    """Rows a reader returns (each seqNr once, the copy with the lowest offset) whose Kafka
    offsets go back as seqNrs go up."""
    head = stored.head
    if head is None:
        return None
    hidden = head.delete_to or 0
    read: dict[int, EventRecord] = {}
    for row in stored.rows:
        event = row.event
        if hidden < event.seq_nr <= head.seq_nr and (
            event.seq_nr not in read
            or event.partition_offset.offset < read[event.seq_nr].partition_offset.offset
        ):
            read[event.seq_nr] = event
    visible = [read[seq] for seq in sorted(read)]
    for before, after in itertools.pairwise(visible):
        if after.partition_offset.offset < before.partition_offset.offset:
            return (
                f"seqNr {after.seq_nr} is from offset {after.partition_offset.offset}, "
                f"before seqNr {before.seq_nr}'s offset {before.partition_offset.offset}"
            )
    return None


def _differing(fold: EventRecord, held: EventRecord) -> list[str]:
    pairs = {
        "payload": (fold.event.payload, held.event.payload),
        "tags": (fold.event.tags, held.event.tags),
        "position": (fold.partition_offset, held.partition_offset),
        "metadata": (fold.metadata, held.metadata),
        "headers": (dict(fold.headers), dict(held.headers)),
        "origin": (fold.origin, held.origin),
        "version": (fold.version, held.version),
    }
    return [name for name, (a, b) in pairs.items() if a != b] or ["content"]


def segments_to_read(
    expected: ExpectedJournal, stored: Iterable[JournalHead], segment_size: int
) -> list[int]:
    """The `journal` segments that may hold rows of the journal: from one below the lowest seqNr
    anything mentions to one above the highest, in the stored head's segment size."""
    heads = [head for head in stored]
    size = heads[0].segment_size if heads else segment_size
    seq_nrs: list[int] = [row.event.seq_nr for row in expected.rows]
    for info in expected.records:
        seq_nrs += [n for n in (info.first_seq_nr, info.last_seq_nr) if n is not None]
    for head in [*heads, *([expected.head] if expected.head else [])]:
        seq_nrs.append(head.seq_nr)
        if head.delete_to is not None:
            seq_nrs.append(head.delete_to)
    if not seq_nrs:
        return []
    low = max((min(seq_nrs) - 1) // size - 1, 0)
    high = (max(seq_nrs) - 1) // size + 1
    return list(range(low, high + 1))


def _head(head: JournalHead) -> str:
    text = f"seqNr {head.seq_nr} at {_position(head)}"
    if head.delete_to is not None:
        text += f", deleteTo {head.delete_to}"
    if head.expiry is not None:
        text += f", expires on {head.expiry.on}"
    return text


def _position(head: JournalHead) -> str:
    return f"offset {head.partition_offset.offset} of partition {head.partition_offset.partition}"


def _maybe(value: int | None) -> str:
    return "none" if value is None else str(value)
