"""Comparing again, in this process, what the pass found different while Kafka moved on.

The pass folds each partition up to the end Kafka had when the check started, while the
replicator goes on applying what comes after; a journal appended to meanwhile, or a pointer2 read
in the middle of a slice, looks different without being so. So each difference is compared again:

* **pointer2**: read again until it covers the heads it should (a slice finishing) or `settle_s`
  passes; what remains is confirmed;
* **a journal**: its records are read again up to a new end offset; once pointer2 has passed the
  last of them (at most `settle_s`), its stored state is read, then the end offset once more: if
  no record of it came in between, the stored state is compared with the fold of its records, and
  that result is final. A journal that moved again is tried again (`attempts` in all), then
  listed as changing; one whose records pointer2 never reached as not replicated.

When pointer2 itself is confirmed behind the heads, the heads' positions stand for it (the
replicator evidently applied up to them).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from dataclasses import dataclass
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
from kjournal.check.fold import fold_partition
from kjournal.check.partition import pointer2_findings
from kjournal.check.state import ExpectedJournal
from kjournal.check.state import StoredJournal
from kjournal.check.state import StoreSnapshot
from kjournal.check.state import expected_of
from kjournal.model import Key
from kjournal.wire.record import ConsumedRecord

from kjournal_replicator.check.kafka import KafkaLog

__all__ = ["Confirmed", "recheck_journals", "settle_pointer2"]

POLL_S = 0.2


@dataclass
class Confirmed:
    """A journal that differs at a moment Kafka and Cassandra agreed on: the fold of its records
    below `end`, with pointer2 past them and no record of it arriving while it was read."""

    result: JournalResult
    expected: ExpectedJournal
    stored: StoredJournal
    end: int


async def settle_pointer2(
    result: PartitionResult, store: StoreSnapshot, kafka: KafkaLog, settle_s: float
) -> list[Finding]:
    """The partition's pointer2 findings that last `settle_s` (none if it had none)."""
    if not result.findings:
        return []
    deadline = time.monotonic() + settle_s
    while True:
        pointer = store.pointer2(result.topic, result.partition)
        end = await kafka.end_offset(result.topic, result.partition)
        findings = pointer2_findings(pointer, result.max_head_offset, end)
        if not findings or time.monotonic() >= deadline:
            return findings
        await asyncio.sleep(POLL_S)


async def recheck_journals(
    topic: str,
    partition: int,
    beginning: int,
    ids: Collection[str],
    store: StoreSnapshot,
    kafka: KafkaLog,
    *,
    horizon: int | None,
    segment_size: int,
    expiry_zone: tzinfo,
    settle_s: float,
    attempts: int = 3,
) -> dict[str, Confirmed | JournalResult | None]:
    """Each journal's final result: Confirmed (it differs), an unchecked JournalResult, or None
    (the same). `horizon`: an offset the replicator is known to have applied up to when pointer2
    is confirmed behind it (the highest head position), else None."""
    pending = set(ids)
    outcome: dict[str, Confirmed | JournalResult | None] = {}
    reason: dict[str, Unchecked] = {}
    for _ in range(attempts):
        if not pending:
            break
        end = await kafka.end_offset(topic, partition)
        records = await _records(kafka, topic, partition, beginning, end, pending)
        last: dict[str, int] = {}
        for record in records:
            assert record.key is not None
            last[record.key.decode("utf-8", "replace")] = record.offset
        waiting = await _wait_replicated(store, topic, partition, pending, last, horizon, settle_s)
        for id in waiting:
            reason[id] = Unchecked.NOT_REPLICATED
        ready = sorted(pending - waiting)
        if not ready:
            continue
        keys = [Key(topic, id) for id in ready]
        folded = fold_partition(
            topic,
            partition,
            [r for r in records if r.key is not None and r.key.decode("utf-8", "replace") in ready],
            beginning=beginning,
            end=end,
            now=datetime.now(UTC),
            segment_size=segment_size,
            expiry_zone=expiry_zone,
        )
        heads = store.stored_heads(keys)
        expected = [expected_of(folded, key) for key in keys]
        wanted = [
            (key, segments_to_read(fold, [h.head] if h.head else [], segment_size))
            for key, fold, h in zip(keys, expected, heads, strict=True)
        ]
        rows = store.rows_of(wanted)
        compared_at = datetime.now(UTC)
        after = await kafka.end_offset(topic, partition)
        moved = {
            r.key.decode("utf-8", "replace")
            for r in await _records(kafka, topic, partition, end, after, set(ready))
            if r.key is not None
        }
        for key, fold, head, held in zip(keys, expected, heads, rows, strict=True):
            if key.id in moved:
                reason[key.id] = Unchecked.CHANGING
                continue
            pending.discard(key.id)
            stored = StoredJournal(head, held)
            findings = compare(fold, stored, now=compared_at, expiry_zone=expiry_zone)
            outcome[key.id] = (
                Confirmed(
                    JournalResult(key, partition, findings, events=len(fold.rows)),
                    fold,
                    stored,
                    end,
                )
                if findings
                else None
            )
    for id in pending:
        outcome[id] = JournalResult(
            Key(topic, id), partition, unchecked=reason.get(id, Unchecked.CHANGING)
        )
    return outcome


async def _records(
    kafka: KafkaLog, topic: str, partition: int, start: int, end: int, ids: Collection[str]
) -> list[ConsumedRecord]:
    wanted = {id.encode() for id in ids}
    return [r async for r in kafka.records(topic, partition, start, end, wanted.__contains__)]


async def _wait_replicated(
    store: StoreSnapshot,
    topic: str,
    partition: int,
    ids: Collection[str],
    last: dict[str, int],
    horizon: int | None,
    settle_s: float,
) -> set[str]:
    """Wait until pointer2 (or the horizon) passes each journal's last record, at most
    `settle_s`; the journals it still has not passed."""
    deadline = time.monotonic() + settle_s
    while True:
        pointer = store.pointer2(topic, partition)
        reached = max(-1 if pointer is None else pointer, -1 if horizon is None else horizon)
        waiting = {id for id in ids if last.get(id, -1) > reached}
        if not waiting or time.monotonic() >= deadline:
            return waiting
        await asyncio.sleep(POLL_S)


def behind_horizon(findings: list[Finding], result: PartitionResult) -> int | None:
    """The highest head position, when pointer2 is confirmed behind it."""
    if any(finding.kind is Kind.POINTER2_BEHIND for finding in findings):
        return result.max_head_offset
    return None
