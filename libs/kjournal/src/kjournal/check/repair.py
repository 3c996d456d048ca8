"""The writes that make a stored journal what the fold says, as the replicator writes: rows first,
the head last, in steps a `ReplicatedStore` runs in order (pure).

* rows the fold has and the store lacks are inserted (by segment, with the journal's record id);
* rows the store has and the fold lacks are deleted one by one (`DeleteRow`);
* a row whose content differs is written again over itself. An INSERT leaves columns it does not
  set as they were, so a stored column the fold has no value for survives it: with `strict`, such
  rows are deleted first and inserted in the next step (a reader may miss them in between);
* the head is inserted, updated (only the fields that differ, `delete_to` and the expiry included,
  which the replicator's plans never take back) or deleted.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime

from kjournal.check.compare import expected_rows
from kjournal.check.compare import row_key
from kjournal.check.compare import target_size
from kjournal.check.findings import Finding
from kjournal.check.findings import Kind
from kjournal.check.state import ExpectedJournal
from kjournal.check.state import StoredJournal
from kjournal.fold.plan import DeleteHead
from kjournal.fold.plan import DeleteRow
from kjournal.fold.plan import InsertHead
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import Step
from kjournal.fold.plan import UpdateHead
from kjournal.fold.plan import Write
from kjournal.memory import StoredRow
from kjournal.model.head import JournalHead

__all__ = ["repair_steps"]

_HEAD_KINDS = {Kind.HEAD_SEQ_NR, Kind.HEAD_DELETE_TO, Kind.HEAD_OFFSET, Kind.HEAD_EXPIRY}


def repair_steps(
    expected: ExpectedJournal,
    stored: StoredJournal,
    findings: list[Finding],
    now: datetime,
    *,
    segment_size: int,
    strict: bool = False,
) -> list[Step]:
    """The steps that turn `stored` into `expected` (nothing for a journal without findings)."""
    if not findings:
        return []
    size = target_size(expected, stored, segment_size)
    fold = expected_rows(expected, size)
    held = {row_key(row): row for row in stored.rows}
    record_id = _record_id(expected, stored)

    inserts: list[StoredRow] = [row for key, row in fold.items() if key not in held]
    changed = [row for key, row in fold.items() if key in held and held[key].event != row.event]
    deletes: list[Write] = [
        DeleteRow(row.segment, row.event.seq_nr, row.event.timestamp)
        for key, row in held.items()
        if key not in fold
    ]
    steps: list[Step] = []
    if strict:
        deletes += [
            DeleteRow(row.segment, row.event.seq_nr, row.event.timestamp) for row in changed
        ]
        first: list[Write] = deletes
        second = _insert(inserts + changed, record_id)
        steps += [tuple(first), tuple(second)]
    else:
        steps.append((*deletes, *_insert(inserts + changed, record_id)))

    head = _head(expected, stored, findings, now, record_id)
    if head is not None:
        steps.append((head,))
    return [step for step in steps if step]


def _record_id(expected: ExpectedJournal, stored: StoredJournal) -> uuid.UUID | None:
    """The head incarnation's id the rows carry: the stored head's, else the one the stored rows
    share (a head lost under its rows), else the fold's."""
    if stored.head is not None and stored.head.record_id is not None:
        return stored.head.record_id
    ids = {row.meta_record_id for row in stored.rows if row.meta_record_id is not None}
    if len(ids) == 1:
        return ids.pop()
    return None if expected.head is None else expected.head.record_id


def _insert(rows: list[StoredRow], record_id: uuid.UUID | None) -> list[Write]:
    by_segment: dict[int, list[StoredRow]] = {}
    for row in sorted(rows, key=row_key):
        by_segment.setdefault(row.segment, []).append(row)
    return [
        InsertRows(segment, tuple(row.event for row in segment_rows), record_id)
        for segment, segment_rows in by_segment.items()
    ]


def _head(
    expected: ExpectedJournal,
    stored: StoredJournal,
    findings: list[Finding],
    now: datetime,
    record_id: uuid.UUID | None,
) -> Write | None:
    fold, held = expected.head, stored.head
    if fold is None:
        return DeleteHead() if held is not None else None
    if held is None:
        head = replace(fold, record_id=record_id)
        origin = expected.rows[0].event.origin if expected.rows else None
        return InsertHead(head, now, origin)
    if not any(finding.kind in _HEAD_KINDS for finding in findings):
        return None
    return _update(fold, held, findings, now)


def _update(fold: JournalHead, held: JournalHead, findings: list[Finding], now: datetime) -> Write:
    expiry_differs = any(finding.kind is Kind.HEAD_EXPIRY for finding in findings)
    return UpdateHead(
        fold.partition_offset,
        now,
        seq_nr=fold.seq_nr if fold.seq_nr != held.seq_nr else None,
        delete_to=fold.delete_to if fold.delete_to != held.delete_to else None,
        remove_delete_to=fold.delete_to is None and held.delete_to is not None,
        expiry=fold.expiry if expiry_differs else None,
        remove_expiry=expiry_differs and fold.expiry is None,
    )
