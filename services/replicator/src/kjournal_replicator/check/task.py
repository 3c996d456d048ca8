"""Executor side: check the Kafka partition a Spark partition holds (one task, one partition).

The rows are the replicator's (`apply.COLUMNS`, the same source options); the Cassandra session
and the snapshot reader are made once per worker process, as the replicator's store is. What goes
back to the driver is the partition's `PartitionResult` (journals that differ or could not be
checked, counts, pointer2 as read).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.snapshot import CassandraSnapshotReader
from kjournal.check.findings import PartitionResult
from kjournal.check.fold import fold_partition
from kjournal.check.partition import check_partition
from kjournal.wire.record import ConsumedRecord

from kjournal_replicator import zip_imports
from kjournal_replicator.apply import to_record

__all__ = ["CheckTask", "check_records"]


@dataclass(frozen=True)
class CheckTask:
    """Pickled into each task: settings, each partition's bounds, the ids stored per partition
    (a Spark broadcast: `.value` maps (topic, partition) to ids), the check's start time."""

    cassandra: CassandraSettings
    bounds: Mapping[tuple[str, int], tuple[int, int]]
    stored_ids: Any
    started: datetime

    def __call__(self, rows: Iterable[Sequence[Any]]) -> Iterator[PartitionResult]:
        zip_imports.install()
        records = [to_record(row) for row in rows]
        reader = _reader(self.cassandra)
        ids: Mapping[tuple[str, int], Sequence[str]] = self.stored_ids.value
        yield from check_records(records, reader, self.cassandra, self.bounds, ids, self.started)


def check_records(
    records: Sequence[ConsumedRecord],
    reader: CassandraSnapshotReader,
    cassandra: CassandraSettings,
    bounds: Mapping[tuple[str, int], tuple[int, int]],
    stored_ids: Mapping[tuple[str, int], Sequence[str]],
    started: datetime,
) -> Iterator[PartitionResult]:
    """Check every Kafka partition found in `records` (each whole, in offset order)."""
    by_partition: dict[tuple[str, int], list[ConsumedRecord]] = {}
    for record in records:
        by_partition.setdefault((record.topic, record.partition), []).append(record)
    for (topic, partition), part in sorted(by_partition.items()):
        if any(a.offset >= b.offset for a, b in itertools.pairwise(part)):
            part.sort(key=lambda record: record.offset)
        beginning, end = bounds[(topic, partition)]
        ids = stored_ids.get((topic, partition), ())
        yield check_one(topic, partition, part, (beginning, end), reader, ids, cassandra, started)


def check_one(
    topic: str,
    partition: int,
    records: Sequence[ConsumedRecord],
    bounds: tuple[int, int],
    reader: CassandraSnapshotReader,
    stored_ids: Sequence[str],
    cassandra: CassandraSettings,
    started: datetime,
) -> PartitionResult:
    """One partition's `records` (all of it from `bounds`' beginning to end, in offset order)
    folded, and the store compared with the fold."""
    beginning, end = bounds
    folded = fold_partition(
        topic,
        partition,
        records,
        beginning=beginning,
        end=end,
        now=started,
        segment_size=cassandra.segment_size,
        expiry_zone=cassandra.expiry_zone,
    )
    return check_partition(folded, reader, stored_ids, expiry_zone=cassandra.expiry_zone)


_lock = threading.Lock()
_readers: dict[str, CassandraSnapshotReader] = {}


def _reader(cassandra: CassandraSettings) -> CassandraSnapshotReader:
    """This worker process's reader for these settings (its session kept for the next task)."""
    key = cassandra.model_dump_json()
    with _lock:
        reader = _readers.get(key)
        if reader is None:
            session = connect(cassandra)
            reader = _readers[key] = CassandraSnapshotReader(
                session, cassandra.names, java_version=cassandra.java_version
            )
        return reader
