"""CassandraReplicatedStore: the replicator's write side of the eventual store (ports.ReplicatedStore).

`write` runs the planned steps of many journals (`kjournal.fold.plan`) in waves: wave k holds the
k-th step of every journal still going, its statements run concurrently through the driver's
callback machinery (`execute_concurrent`, at most `concurrency` in flight) and every one of them
is acknowledged before wave k+1 starts. So a journal's rows are in before its `metajournal` head
(anatomy §6.4, docs/replication.md), and no thread waits per journal: the client's CPU per
statement is about half of what a thread per journal costs.

Journal rows of one segment (one Cassandra partition) go in UNLOGGED batches whose estimated size
stays under `max_batch_bytes` (Cassandra fails batches over `batch_size_fail_threshold`, 50 KiB by
default); a row bigger than that goes alone. Every statement is an idempotent upsert or delete,
so the driver may retry it. Synchronous on purpose: the replicator runs inside Spark tasks.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent, execute_concurrent_with_args
from cassandra.query import BatchStatement, BatchType, PreparedStatement, Statement

from kjournal.cassandra.rows import (
    JOURNAL_INSERT_COLUMNS,
    METAJOURNAL_HEAD_COLUMNS,
    expire_after_to_duration,
    journal_head_from_row,
    journal_head_values,
    journal_insert_cql,
    journal_insert_values,
    quarantine_insert_cql,
    quarantine_insert_values,
)
from kjournal.cassandra.segments import (
    METAJOURNAL_BUCKETS,
    OLD_METAJOURNAL_BUCKETS,
    metajournal_bucket,
)
from kjournal.cassandra.session import READ_PROFILE, WRITE_PROFILE, driver_errors, translate_error
from kjournal.cassandra.tables import TableNames
from kjournal.fold.plan import (
    DeleteHead,
    DeleteRows,
    InsertHead,
    InsertRows,
    Step,
    UpdateHead,
    Write,
)
from kjournal.model import Key
from kjournal.model.head import DEFAULT_SEGMENT_SIZE, JournalHead
from kjournal.model.quarantine import QuarantinedRecord

__all__ = ["DEFAULT_MAX_BATCH_BYTES", "CassandraReplicatedStore"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH_BYTES = 40 * 1024
"""Below Cassandra's default batch_size_fail_threshold (50 KiB), with room for estimate error."""

_HEAD_INSERT_EXTRA = ("created", "created_date", "updated", "origin")
_ROW_OVERHEAD = 96  # keys, seqNr, partition, offset, timestamp, uuid and framing, roughly
_VARIABLE_COLUMNS = tuple(
    JOURNAL_INSERT_COLUMNS.index(column)
    for column in (
        "id",
        "origin",
        "version",
        "tags",
        "payload_txt",
        "payload_bin",
        "metadata",
        "headers",
    )
)


class CassandraReplicatedStore:
    """`ReplicatedStore` over the journal's Cassandra tables.

    segment_size: the `journal` segment size given to journals created from now on.
    concurrency: statements in flight at once (per call).
    """

    def __init__(
        self,
        session: Session,
        tables: TableNames,
        *,
        segment_size: int = DEFAULT_SEGMENT_SIZE,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        concurrency: int = 64,
    ) -> None:
        if max_batch_bytes < 1 or concurrency < 1:
            raise ValueError("max_batch_bytes and concurrency must be positive")
        self._session = session
        self._tables = tables
        self.segment_size = segment_size
        self._max_batch_bytes = max_batch_bytes
        self._concurrency = concurrency
        self._lock = threading.Lock()
        # Heads found in the old 100-bucket layout are written where they are (anatomy §3.4).
        self._old_buckets: dict[Key, int] = {}

        journal = tables.qualified(tables.journal)
        metajournal = tables.qualified(tables.metajournal)
        pointer2 = tables.qualified(tables.pointer2)
        quarantine = tables.qualified(tables.quarantine)
        self._insert_row = self._prepare(journal_insert_cql(tables))
        self._delete_segment = self._prepare(
            f"DELETE FROM {journal} WHERE id = ? AND topic = ? AND segment = ?"
        )
        self._delete_segment_to = self._prepare(
            f"DELETE FROM {journal} WHERE id = ? AND topic = ? AND segment = ? AND seq_nr <= ?"
        )
        self._select_heads = self._prepare(
            f"SELECT segment, {', '.join(METAJOURNAL_HEAD_COLUMNS)} FROM {metajournal} "
            "WHERE topic = ? AND segment IN ? AND id = ?"
        )
        columns = ("topic", "segment", "id", *METAJOURNAL_HEAD_COLUMNS, *_HEAD_INSERT_EXTRA)
        self._insert_head = self._prepare(
            f"INSERT INTO {metajournal} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))})"
        )
        self._delete_head = self._prepare(
            f"DELETE FROM {metajournal} WHERE topic = ? AND segment = ? AND id = ?"
        )
        self._select_pointer2 = self._prepare(
            f"SELECT offset FROM {pointer2} WHERE topic = ? AND partition = ?"
        )
        self._insert_pointer2 = self._prepare(
            f"INSERT INTO {pointer2} (topic, partition, offset, created, updated) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        self._update_pointer2 = self._prepare(
            f"UPDATE {pointer2} SET offset = ?, updated = ? WHERE topic = ? AND partition = ?"
        )
        self._insert_quarantine = self._prepare(quarantine_insert_cql(tables))
        self._first_quarantined = self._prepare(
            f"SELECT partition, offset FROM {quarantine} WHERE topic = ? AND id = ? LIMIT 1"
        )
        self._first_quarantined_in = self._prepare(
            f"SELECT offset FROM {quarantine} WHERE topic = ? AND id = ? AND partition = ? LIMIT 1"
        )
        self._update_heads = self._prepare_update_heads()

    # ReplicatedStore

    def pointer2(self, topic: str, partition: int) -> int | None:
        row = self._one(self._select_pointer2, (topic, partition), f"reading pointer2 of {topic}")
        return None if row is None else int(row[0])

    def set_pointer2(
        self, topic: str, partition: int, offset: int, now: datetime, *, insert: bool
    ) -> None:
        if insert:
            statement = self._insert_pointer2.bind((topic, partition, offset, now, now))
        else:
            statement = self._update_pointer2.bind((offset, now, topic, partition))
        with driver_errors(f"writing pointer2 of {topic}:{partition}"):
            self._session.execute(statement, execution_profile=WRITE_PROFILE)

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]:
        """One request per journal for both bucket layouts; the current one wins."""
        buckets = [
            (
                metajournal_bucket(key.id, METAJOURNAL_BUCKETS),
                metajournal_bucket(key.id, OLD_METAJOURNAL_BUCKETS),
            )
            for key in keys
        ]
        args = [(key.topic, list(pair), key.id) for key, pair in zip(keys, buckets, strict=True)]
        results = self._read_all(self._select_heads, args, "reading journal heads")
        heads: list[JournalHead | None] = []
        with self._lock:
            for key, (current, old), rows in zip(keys, buckets, results, strict=True):
                found = {row[0]: row[1:] for row in rows}
                if current not in found and old in found:
                    self._old_buckets[key] = old
                else:
                    self._old_buckets.pop(key, None)
                row = found.get(current, found.get(old))
                heads.append(None if row is None else journal_head_from_row(row))
        return heads

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        errors: list[Exception | None] = [None] * len(journals)
        with self._lock:
            buckets = [
                self._old_buckets.get(key) or metajournal_bucket(key.id, METAJOURNAL_BUCKETS)
                for key, _ in journals
            ]
        waves = max((len(steps) for _, steps in journals), default=0)
        for wave in range(waves):
            owners: list[int] = []

            def statements(wave: int = wave, owners: list[int] = owners) -> Iterator[Any]:
                # Consumed by the driver as requests complete (on its I/O thread, under its
                # lock), so statements are built while Cassandra works. It must not raise: a
                # journal whose statements cannot be built fails alone.
                for index, (key, steps) in enumerate(journals):
                    if errors[index] is not None or wave >= len(steps):
                        continue
                    try:
                        built = [
                            statement
                            for write in steps[wave]
                            for statement in self._statements(key, buckets[index], write)
                        ]
                    except Exception as exc:
                        errors[index] = exc
                        continue
                    if any(isinstance(write, InsertHead) for write in steps[wave]):
                        buckets[index] = metajournal_bucket(key.id, METAJOURNAL_BUCKETS)
                    for statement in built:
                        owners.append(index)
                        yield statement, None

            results = execute_concurrent(
                self._session,
                statements(),
                concurrency=self._concurrency,
                raise_on_first_error=False,
                execution_profile=WRITE_PROFILE,
            )
            for index, (ok, outcome) in zip(owners, results, strict=True):
                if not ok and errors[index] is None:
                    key = journals[index][0]
                    errors[index] = translate_error(outcome, f"replicating {key}") or outcome
        with self._lock:
            for (key, steps), error in zip(journals, errors, strict=True):
                if error is None and any(
                    isinstance(w, InsertHead | DeleteHead) for step in steps for w in step
                ):
                    self._old_buckets.pop(key, None)  # a new head goes to the current layout
        return errors

    def quarantine(self, records: Sequence[QuarantinedRecord]) -> None:
        statements = [
            (self._insert_quarantine.bind(quarantine_insert_values(record)), None)
            for record in records
        ]
        with driver_errors("writing quarantined records"):
            execute_concurrent(
                self._session,
                statements,
                concurrency=self._concurrency,
                execution_profile=WRITE_PROFILE,
            )

    def quarantined_from(self, topic: str, partition: int, ids: Collection[str]) -> dict[str, int]:
        what = f"reading quarantined journals of {topic}"
        ids = list(ids)
        results = self._read_all(self._first_quarantined, [(topic, id) for id in ids], what)
        found: dict[str, int] = {}
        for id, rows in zip(ids, results, strict=True):
            if not rows:
                continue
            first_partition, first_offset = rows[0]
            if first_partition == partition:
                found[id] = first_offset
            elif first_partition > partition:
                found[id] = -1  # rows are ordered by partition: none in this one
            else:
                here = self._one(self._first_quarantined_in, (topic, id, partition), what)
                found[id] = -1 if here is None else int(here[0])
        return found

    # Statements

    def _statements(self, key: Key, bucket: int, write: Write) -> Iterator[Statement]:
        if isinstance(write, InsertRows):
            yield from self._row_batches(key, write)
        elif isinstance(write, DeleteRows):
            if write.to is None:
                yield self._delete_segment.bind((key.id, key.topic, write.segment))
            else:
                yield self._delete_segment_to.bind((key.id, key.topic, write.segment, write.to))
        elif isinstance(write, InsertHead):
            # A new head always goes to the current layout, whatever held the previous one.
            current = metajournal_bucket(key.id, METAJOURNAL_BUCKETS)
            created = write.created.astimezone(UTC)
            values = (key.topic, current, key.id, *journal_head_values(write.head))
            values += (created, created.date(), created, write.origin)
            yield self._insert_head.bind(values)
        elif isinstance(write, UpdateHead):
            yield self._update_head(write).bind(_update_values(key, bucket, write))
        else:
            assert isinstance(write, DeleteHead)
            yield self._delete_head.bind((key.topic, bucket, key.id))

    def _row_batches(self, key: Key, write: InsertRows) -> Iterator[Statement]:
        batch: list[Statement] = []
        size = 0
        for event in write.events:
            values = journal_insert_values(key, write.segment, event, write.meta_record_id)
            row_size = _estimate(values)
            if batch and size + row_size > self._max_batch_bytes:
                yield _batch(batch)
                batch, size = [], 0
            batch.append(self._insert_row.bind(values))
            size += row_size
        if batch:
            yield _batch(batch)

    def _update_head(self, write: UpdateHead) -> PreparedStatement:
        expiry = 1 if write.expiry is not None else 2 if write.remove_expiry else 0
        return self._update_heads[(write.seq_nr is not None, write.delete_to is not None, expiry)]

    def _prepare_update_heads(self) -> dict[tuple[bool, bool, int], PreparedStatement]:
        """Every shape of head UPDATE, prepared up front: statements are built on the driver's
        I/O thread (see `write`), where a blocking prepare would wait for itself."""
        metajournal = self._tables.qualified(self._tables.metajournal)
        statements = {}
        for seq_nr, delete_to, expiry in itertools.product((False, True), (False, True), range(3)):
            sets = ["partition = ?", "offset = ?", "updated = ?"]
            if seq_nr:
                sets.append("seq_nr = ?")
            if delete_to:
                sets.append("delete_to = ?")
            if expiry == 1:
                sets += ["expire_after = ?", "expire_on = ?"]
            elif expiry == 2:
                sets += ["expire_after = null", "expire_on = null"]
            statements[(seq_nr, delete_to, expiry)] = self._prepare(
                f"UPDATE {metajournal} SET {', '.join(sets)} WHERE topic = ? AND segment = ? AND id = ?"
            )
        return statements

    # Execution

    def _prepare(self, cql: str) -> PreparedStatement:
        with driver_errors(f"preparing {cql!r}"):
            statement = self._session.prepare(cql)
        statement.is_idempotent = True
        return statement

    def _one(self, statement: PreparedStatement, values: tuple[Any, ...], what: str) -> Any:
        with driver_errors(what):
            return self._session.execute(
                statement.bind(values), execution_profile=READ_PROFILE
            ).one()

    def _read_all(
        self, statement: PreparedStatement, args: Sequence[tuple[Any, ...]], what: str
    ) -> list[list[Any]]:
        """The rows of each bound statement, read concurrently; the first error is raised."""
        if not args:
            return []
        with driver_errors(what):
            results = execute_concurrent_with_args(
                self._session,
                statement,
                args,
                concurrency=self._concurrency,
                execution_profile=READ_PROFILE,
            )
            return [list(result) for _, result in results]


def _batch(statements: list[Statement]) -> Statement:
    if len(statements) == 1:
        return statements[0]
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    for statement in statements:
        batch.add(statement)
    batch.is_idempotent = True
    return batch


def _estimate(values: tuple[Any, ...]) -> int:
    """Roughly the bytes a journal row adds to a batch: its variable-length values dominate."""
    size = _ROW_OVERHEAD
    for index in _VARIABLE_COLUMNS:
        value = values[index]
        if isinstance(value, str):
            size += len(value) if value.isascii() else len(value.encode("utf-8"))
        elif isinstance(value, bytes):
            size += len(value)
        elif isinstance(value, frozenset | set):
            size += sum(len(tag.encode("utf-8")) + 4 for tag in value)
        elif isinstance(value, dict):
            size += sum(
                len(k.encode("utf-8")) + len(v.encode("utf-8")) + 8 for k, v in value.items()
            )
    return size


def _update_values(key: Key, bucket: int, write: UpdateHead) -> tuple[Any, ...]:
    position = write.partition_offset
    values: list[Any] = [position.partition, position.offset, write.updated]
    if write.seq_nr is not None:
        values.append(write.seq_nr)
    if write.delete_to is not None:
        values.append(write.delete_to)
    if write.expiry is not None:
        values += [expire_after_to_duration(write.expiry.after), write.expiry.on]
    return (*values, key.topic, bucket, key.id)
