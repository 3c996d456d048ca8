"""Quarantine: a slice's poison records and the records parked behind them.

A record whose header or payload cannot be decoded is written to the quarantine table with its raw
bytes and the reason; that flags its journal (reads of it fail loudly) and the rest of the
partition keeps replicating. The journal's later records are not applied — applying them over a
missing action would store a state that never existed — but *parked* in the same table, in order
and raw, so nothing depends on Kafka retention until an operator repairs the poison record and
re-applies what follows it. The journal stays quarantined from that offset on, in this slice and
all later ones, until its quarantine rows are removed. Marks are not parked: they have no storage
effect. Every quarantine row is a function of the record and of the first quarantined offset
only, so replaying a slice rewrites the same rows.
"""

from __future__ import annotations

import logging
from datetime import UTC
from datetime import datetime

from opentelemetry.trace import get_current_span

from kjournal.model import ACTION_HEADER
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.replicate.collect import JournalSlice
from kjournal.spans import conventions as sem
from kjournal.wire.record import ConsumedRecord

__all__ = ["quarantined_records"]

log = logging.getLogger(__name__)

_MAX_REASON = 1000


def quarantined_records(
    journal: JournalSlice, cutoff: int, error: str | None, now: datetime
) -> list[QuarantinedRecord]:
    """The record at `cutoff` (if this slice found it bad), then every later one, parked."""
    key = journal.key
    records: list[QuarantinedRecord] = []
    if error is not None:
        record = journal.raw[cutoff]
        records.append(_quarantined(key, record, error, now))
        current = get_current_span()
        if current.is_recording():
            current.add_event(
                "quarantined",
                {
                    sem.JOURNAL_ID: key.id,
                    sem.MESSAGING_PARTITION: str(record.partition),
                    sem.MESSAGING_KAFKA_OFFSET: cutoff,
                    sem.REASON: error[:_MAX_REASON],
                },
            )
        log.warning(
            "quarantined record %s:%d offset %d of journal %s: %s",
            key.topic,
            record.partition,
            cutoff,
            key,
            error[:_MAX_REASON],
        )

    later: list[tuple[ConsumedRecord, str | None]] = [
        (journal.raw[a.offset], None)
        for a in journal.actions_after(cutoff)
        if not isinstance(a.action, Mark)
    ]
    if journal.poison is not None and journal.poison[0].offset > cutoff:
        later.append(journal.poison)
    later += journal.behind
    why = f"parked: behind the quarantined record at offset {cutoff}"
    for record, own in later:
        reason = why if own is None else f"{why}; {own}"
        records.append(_quarantined(key, record, reason, now))
    if later:
        current = get_current_span()
        if current.is_recording():
            current.add_event(
                "parked",
                {
                    sem.JOURNAL_ID: key.id,
                    sem.RECORDS: len(later),
                    sem.OFFSET_FIRST: later[0][0].offset,
                    sem.OFFSET_LAST: later[-1][0].offset,
                    sem.BEHIND_OFFSET: cutoff,
                },
            )
        log.warning(
            "parked %d record(s) of journal %s, offsets %d..%d, behind offset %d",
            len(later),
            key,
            later[0][0].offset,
            later[-1][0].offset,
            cutoff,
        )
    return records


def _quarantined(key: Key, record: ConsumedRecord, reason: str, now: datetime) -> QuarantinedRecord:
    header = next((value for name, value in record.headers if name == ACTION_HEADER), None)
    timestamp = None
    if record.timestamp_ms is not None and record.timestamp_ms >= 0:
        timestamp = datetime.fromtimestamp(record.timestamp_ms / 1000, UTC)
    return QuarantinedRecord(
        topic=key.topic,
        partition=record.partition,
        offset=record.offset,
        id=key.id,
        reason=reason[:_MAX_REASON],
        header=header,
        value=record.value,
        timestamp=timestamp,
        quarantined_at=now,
    )
