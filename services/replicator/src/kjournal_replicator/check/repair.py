"""Repairing what the re-check confirmed, with the replicator's own store (CassandraReplicatedStore).

Per journal, right before writing: the end offset is read again and the journal's records since
the fold's end looked for, and its head read again. A journal that got a record, or whose head
the replicator changed, is not touched now: it is compared again (recheck.py) and repaired only if
it still differs at the new end. Then the steps of `kjournal.check.repair` run through the store
(rows, then the head; idempotent writes), and the journal is read back and compared: a row an
INSERT could not fix (a column the fold has no value for) gets the strict repair, delete then
insert. pointer2 is set last: to the fold's last offset when every journal of the partition is
now the same as the fold, else to the highest head position.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from datetime import tzinfo

from kjournal.cassandra.snapshot import CassandraSnapshotReader
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.check.compare import compare
from kjournal.check.compare import segments_to_read
from kjournal.check.findings import Finding
from kjournal.check.findings import Kind
from kjournal.check.findings import PartitionResult
from kjournal.check.repair import repair_steps
from kjournal.check.state import StoredJournal

from kjournal_replicator.check.kafka import KafkaLog
from kjournal_replicator.check.recheck import Confirmed

__all__ = ["REPAIRED", "repair_journal", "repair_pointer2"]

log = logging.getLogger(__name__)

REPAIRED = "repaired"
CHANGED = "changed in Kafka or Cassandra during the run"


async def repair_journal(
    confirmed: Confirmed,
    store: CassandraReplicatedStore,
    snapshot: CassandraSnapshotReader,
    kafka: KafkaLog,
    *,
    segment_size: int,
    expiry_zone: tzinfo,
) -> str:
    """REPAIRED, CHANGED (not touched: compare it again), or what still differs."""
    key = confirmed.result.key
    partition = confirmed.result.partition
    end = await kafka.end_offset(key.topic, partition)
    wanted = key.id.encode()
    async for _ in kafka.records(key.topic, partition, confirmed.end, end, wanted.__eq__):
        return CHANGED
    if snapshot.stored_heads([key])[0] != confirmed.stored.heads:
        return CHANGED
    findings = confirmed.result.findings
    stored = confirmed.stored
    for strict in (False, True):
        store.heads([key])  # where its head sits (the old bucket layout is written in place)
        steps = repair_steps(
            confirmed.expected,
            stored,
            findings,
            datetime.now(UTC),
            segment_size=segment_size,
            strict=strict,
        )
        error = store.write([(key, steps)])[0]
        if error is not None:
            return f"failed: {error}"
        stored = _read(snapshot, confirmed, segment_size)
        findings = compare(
            confirmed.expected, stored, now=datetime.now(UTC), expiry_zone=expiry_zone
        )
        if not findings:
            log.info("repaired %s (%d steps)", key, len(steps))
            return REPAIRED
        if {finding.kind for finding in findings} != {Kind.EVENTS_CHANGED}:
            break
    return "still differs: " + ", ".join(finding.kind.value for finding in findings)


def _read(
    snapshot: CassandraSnapshotReader, confirmed: Confirmed, segment_size: int
) -> StoredJournal:
    key = confirmed.result.key
    heads = snapshot.stored_heads([key])[0]
    segments = segments_to_read(
        confirmed.expected, [heads.head] if heads.head else [], segment_size
    )
    return StoredJournal(heads, snapshot.rows_of([(key, segments)])[0])


def repair_pointer2(
    result: PartitionResult,
    findings: Sequence[Finding],
    store: CassandraReplicatedStore,
    *,
    all_same: bool,
) -> int | None:
    """Set the partition's pointer2 where the check found it should be; the value set, or None.

    all_same: every journal of the partition now equals the fold of the records below the
    pass's end (so the replicator applied all of them).
    """
    if not findings:
        return None
    target = result.end - 1 if all_same else result.max_head_offset
    if target is None or target < 0:
        return None
    current = store.pointer2(result.topic, result.partition)
    if current == target:
        return target
    store.set_pointer2(
        result.topic, result.partition, target, datetime.now(UTC), insert=current is None
    )
    log.info("pointer2 of %s:%d set from %s to %d", result.topic, result.partition, current, target)
    return target
