"""One partition checked: its fold against what the store holds for each of its journals.

Synchronous and self-contained, so that a Spark task runs it on its Kafka partition's records
(kjournal_replicator.check.task) and the in-process check runs it the same way. Journals are read
and compared a chunk at a time, so memory holds the fold and one chunk of stored rows.

What it returns is provisional for journals that moved while it ran: the fold covers offsets below
the end Kafka had when the check started, while the replicator keeps applying newer records. The
driver compares those again (kjournal_replicator.check.recheck) before it reports them.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC
from datetime import datetime
from datetime import tzinfo

from kjournal.check.compare import compare
from kjournal.check.compare import segments_to_read
from kjournal.check.findings import Finding
from kjournal.check.findings import JournalResult
from kjournal.check.findings import Kind
from kjournal.check.findings import PartitionResult
from kjournal.check.findings import Unchecked
from kjournal.check.fold import FoldedPartition
from kjournal.check.state import StoredJournal
from kjournal.check.state import StoreSnapshot
from kjournal.check.state import expected_of
from kjournal.model import Key

__all__ = ["CHUNK", "check_partition", "pointer2_findings"]

CHUNK = 256
"""Journals read from the store at once."""


def check_partition(
    folded: FoldedPartition,
    store: StoreSnapshot,
    stored_ids: Collection[str] = (),
    *,
    expiry_zone: tzinfo = UTC,
    now: datetime | None = None,
) -> PartitionResult:
    """Compare every journal of the partition: those with records in the fold and `stored_ids`,
    the ids the store holds heads of that belong to this partition.

    now: the latest time the records could have been replicated (default: each chunk's
        comparison time).
    """
    topic, partition = folded.topic, folded.partition
    pointer = store.pointer2(topic, partition)
    result = PartitionResult(topic, partition, folded.beginning, folded.end, pointer, None)
    ids = sorted(set(folded.journals) | set(stored_ids))
    for start in range(0, len(ids), CHUNK):
        chunk = [Key(topic, id) for id in ids[start : start + CHUNK]]
        checkable = [key for key in chunk if folded.checkable(key.id)]
        for key in chunk:
            if key not in checkable:
                result.results.append(
                    JournalResult(key, partition, unchecked=Unchecked.BEFORE_RETENTION)
                )
        heads = store.stored_heads(checkable)
        expected = [expected_of(folded, key) for key in checkable]
        wanted = [
            (
                key,
                segments_to_read(
                    fold,
                    [head.head] if head.head is not None else [],
                    folded.store.segment_size,
                ),
            )
            for key, fold, head in zip(checkable, expected, heads, strict=True)
        ]
        rows = store.rows_of(wanted)
        compared_at = now or datetime.now(UTC)
        for key, fold, head, held in zip(checkable, expected, heads, rows, strict=True):
            if head.head is not None:
                offset = head.head.partition_offset.offset
                if result.max_head_offset is None or offset > result.max_head_offset:
                    result.max_head_offset = offset
            findings = compare(
                fold, StoredJournal(head, held), now=compared_at, expiry_zone=expiry_zone
            )
            result.journals += 1
            result.events += len(fold.rows)
            if findings:
                result.results.append(
                    JournalResult(key, partition, findings, events=len(fold.rows))
                )
                last = folded.last_offset(key.id)
                if last is not None:
                    result.last_offsets[key.id] = last
    result.findings = pointer2_findings(pointer, result.max_head_offset, folded.end)
    return result


def pointer2_findings(pointer: int | None, max_head_offset: int | None, end: int) -> list[Finding]:
    """What is wrong with a partition's pointer2, given the highest head position of its journals
    and Kafka's end offset (read after pointer2)."""
    if pointer is None:
        if max_head_offset is None:
            return []
        return [
            Finding(
                Kind.POINTER2_MISSING,
                f"no pointer2, but heads are stored up to offset {max_head_offset}",
            )
        ]
    findings = []
    if max_head_offset is not None and pointer < max_head_offset:
        findings.append(
            Finding(
                Kind.POINTER2_BEHIND,
                f"pointer2 {pointer} is below the heads it should cover (up to offset "
                f"{max_head_offset}): the replicator would apply those records again",
            )
        )
    if pointer >= end:
        findings.append(
            Finding(
                Kind.POINTER2_AHEAD,
                f"pointer2 {pointer} is past Kafka's last record (offset {end - 1}): records "
                "up to it would be skipped",
            )
        )
    return findings
