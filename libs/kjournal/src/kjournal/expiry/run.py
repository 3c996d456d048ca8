"""One expiry run over one topic: find the expired heads, look at each journal once more, purge.

1. **Find.** The heads whose `expire_on` is one of the dates `today − lookback + 1 … today` (the
   `metajournal` index on `expire_on`, as kafka-journal's `PurgeExpired` selects them), oldest
   date first, in both bucket layouts.
2. **Look again, per Kafka partition.** Read the partition's `pointer2`, then the candidates'
   heads, then the partition's end offset, then the candidates' records between the two (one scan
   of the partition's unreplicated tail for all of them). A head read after `pointer2` covers
   every action up to it, so the head and the tail together are the journal as it is now.
   `decide.verdict` then says purge, or why not.
3. **Purge.** One Purge action per journal, produced to the journal's partition like a writer's
   purge. At most `max_purges` per run; the rest waits for the next run (they are reported).
4. **Races.** An append produced after step 2 read the end offset and before the purge landed
   is purged with the journal: Kafka has no conditional produce. The run reads that window back
   and reports every such append (`races`), which is what an operator needs to alert on.

Idempotent: a journal purged is gone (its head deleted once the replicator applies the purge); a
purge produced but not yet replicated is found in the tail (`purge-pending`) and not produced
again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import timedelta
from typing import Protocol

from kjournal.errors import FormatError
from kjournal.expiry.decide import Skip
from kjournal.expiry.decide import verdict
from kjournal.metrics import NOOP_METRICS
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import EXPIRY_JOURNALS_EXPIRED
from kjournal.metrics.catalogue import EXPIRY_JOURNALS_PURGED
from kjournal.metrics.catalogue import EXPIRY_JOURNALS_SKIPPED
from kjournal.metrics.catalogue import EXPIRY_PURGE_RACES
from kjournal.metrics.catalogue import EXPIRY_RUN_SECONDS
from kjournal.model import Action
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model.head import JournalHead
from kjournal.ports import PartitionRecords
from kjournal.wire.record import decode_action_record

__all__ = ["ExpiryLog", "ExpiryReport", "ExpiryStore", "Race", "expire_topic"]

log = logging.getLogger(__name__)


class ExpiryStore(Protocol):
    """The eventual store's side (synchronous: Cassandra's driver, as the replicator uses it)."""

    def expired(self, topic: str, on: date) -> list[str]:
        """The ids of the journals of `topic` whose head has `expire_on` = `on`."""
        ...

    def pointer2(self, topic: str, partition: int) -> int | None: ...

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]: ...


class ExpiryLog(PartitionRecords, Protocol):
    """The journal log's side: where a journal lives, what its partition holds, purging it."""

    async def partition(self, key: Key) -> int: ...

    async def end_offset(self, topic: str, partition: int) -> int: ...

    async def purge(self, key: Key) -> PartitionOffset:
        """Produce a Purge action of the journal; where it landed."""
        ...


@dataclass(frozen=True, slots=True)
class Race:
    """An append that landed between the run's last look at its journal and the journal's purge."""

    key: Key
    append: PartitionOffset
    purge: PartitionOffset


@dataclass
class ExpiryReport:
    topic: str
    today: date
    expired: int = 0  # heads found with expire_on in the window
    purged: list[tuple[Key, PartitionOffset | None]] = field(default_factory=list)  # None: dry run
    skipped: dict[Skip, list[Key]] = field(default_factory=dict)
    deferred: list[Key] = field(default_factory=list)  # over max_purges: for the next run
    races: list[Race] = field(default_factory=list)
    dry_run: bool = False

    def summary(self) -> str:
        skipped = ", ".join(f"{len(keys)} {skip.value}" for skip, keys in self.skipped.items())
        verb = "would purge" if self.dry_run else "purged"
        text = (
            f"expiry of {self.topic} as of {self.today.isoformat()}: {self.expired} expired, "
            f"{len(self.purged)} {verb}, skipped: {skipped or 'none'}"
        )
        if self.deferred:
            text += f", {len(self.deferred)} left for the next run (max purges reached)"
        if self.races:
            text += f", {len(self.races)} appends purged as they landed (see the log)"
        return text


async def expire_topic(
    topic: str,
    store: ExpiryStore,
    journal_log: ExpiryLog,
    today: date,
    *,
    lookback_days: int = 30,
    max_purges: int = 1000,
    dry_run: bool = False,
    metrics: Metrics = NOOP_METRICS,
) -> ExpiryReport:
    """Purge the journals of `topic` that expired by `today` (see the module docstring).

    today: the date in the expiry time zone (`CassandraSettings.expiry_time_zone`).
    lookback_days: how many dates up to `today` are looked up (a head whose expire_on is older
        is not found: run the job at least once per that many days).
    dry_run: decide, but produce nothing.
    """
    if lookback_days < 1 or max_purges < 0:
        raise ValueError("lookback_days must be at least 1 and max_purges not negative")
    started = time.perf_counter()
    report = ExpiryReport(topic, today, dry_run=dry_run)
    ids: dict[str, None] = {}
    for back in range(lookback_days - 1, -1, -1):
        for id in store.expired(topic, today - timedelta(days=back)):
            ids.setdefault(id)
    report.expired = len(ids)
    metrics.increment(EXPIRY_JOURNALS_EXPIRED.name, len(ids), topic=topic)

    by_partition: dict[int, list[Key]] = {}
    for id in ids:
        key = Key(topic, id)
        by_partition.setdefault(await journal_log.partition(key), []).append(key)
    for partition in sorted(by_partition):
        keys = by_partition[partition]
        room = max_purges - len(report.purged)
        if room <= 0:
            report.deferred += keys
            continue
        await _partition(topic, partition, keys, store, journal_log, today, room, report)

    for skip, keys in report.skipped.items():
        metrics.increment(EXPIRY_JOURNALS_SKIPPED.name, len(keys), topic=topic, reason=skip.value)
    if report.deferred:
        metrics.increment(
            EXPIRY_JOURNALS_SKIPPED.name, len(report.deferred), topic=topic, reason="limit"
        )
    if not dry_run:
        metrics.increment(EXPIRY_JOURNALS_PURGED.name, len(report.purged), topic=topic)
    if report.races:
        metrics.increment(EXPIRY_PURGE_RACES.name, len(report.races), topic=topic)
    metrics.observe(EXPIRY_RUN_SECONDS.name, time.perf_counter() - started, topic=topic)
    log.info("%s", report.summary())
    return report


async def _partition(
    topic: str,
    partition: int,
    keys: list[Key],
    store: ExpiryStore,
    journal_log: ExpiryLog,
    today: date,
    room: int,
    report: ExpiryReport,
) -> None:
    pointer = store.pointer2(topic, partition)
    heads = store.heads(keys)
    end = await journal_log.end_offset(topic, partition)
    start = 0 if pointer is None else pointer + 1
    tails = await _actions(journal_log, topic, partition, start, end, keys)
    purged: dict[Key, PartitionOffset] = {}
    for key, head in zip(keys, heads, strict=True):
        if len(purged) >= room:
            report.deferred.append(key)
            continue
        tail = tails.get(key, [])
        skip = Skip.UNREADABLE if tail is None else verdict(head, _plain(tail), today)
        if skip is not None:
            report.skipped.setdefault(skip, []).append(key)
            continue
        if report.dry_run:
            report.purged.append((key, None))
            continue
        position = await journal_log.purge(key)
        log.info("purged expired journal %s at %s", key, position)
        purged[key] = position
        report.purged.append((key, position))
    if purged:
        last = max(position.offset for position in purged.values())
        appended = await _actions(journal_log, topic, partition, end, last, purged)
        for key, records in appended.items():
            for record in records or ():
                if isinstance(record.action, Append) and record.offset < purged[key].offset:
                    race = Race(key, record.partition_offset, purged[key])
                    log.error(
                        "expiry purged %s over an append that landed at offset %d while its "
                        "purge was produced (purge at offset %d): the append's events are gone",
                        key,
                        race.append.offset,
                        race.purge.offset,
                    )
                    report.races.append(race)


def _plain(records: Iterable[ActionRecord]) -> Iterator[Action]:
    return (record.action for record in records)


async def _actions(
    journal_log: ExpiryLog, topic: str, partition: int, start: int, end: int, keys: Iterable[Key]
) -> dict[Key, list[ActionRecord] | None]:
    """The keys' actions at offsets start ≤ offset < end, in order; None for a journal with a
    record there that cannot be decoded (the replicator quarantines it: not ours to judge)."""
    wanted: Collection[bytes] = {key.id.encode() for key in keys}
    found: dict[Key, list[ActionRecord] | None] = {}
    async for record in journal_log.records(topic, partition, start, end, wanted.__contains__):
        try:
            decoded = decode_action_record(record)
        except FormatError:
            assert record.key is not None
            found[Key(topic, record.key.decode("utf-8", "replace"))] = None
            continue
        if decoded is not None:
            actions = found.setdefault(decoded.action.key, [])
            if actions is not None:
                actions.append(decoded)
    return found
