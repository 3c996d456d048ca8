"""CassandraReplicatedStore: the replicator's write side of the eventual store (ports.ReplicatedStore).

`write` runs the planned steps of many journals (`kjournal.fold.plan`) in waves: wave k holds the
k-th step of every journal still going, and every statement of wave k is acknowledged before wave
k+1 starts. So a journal's rows are in before its `metajournal` head (docs/replication.md).

The Python driver spends far more CPU per request than per statement, so requests carry many
statements: a wave's statements, whatever their journals, are packed into UNLOGGED batches of at
most `max_batch_statements` statements whose estimated size stays under `max_batch_bytes`
(Cassandra fails batches over `batch_size_fail_threshold`, 50 KiB by default); a statement bigger
than that goes alone. The writes of one wave never touch the same row twice (a step's writes are
independent, and journals are disjoint), so the shared write timestamp of a CQL batch orders nothing
that matters. CQL batches run concurrently through the driver's callback machinery
(`execute_concurrent`, at most `concurrency` in flight); a failed CQL batch fails every journal in it.
Head lookups are grouped the same way: one query reads the heads of up to `metajournal.HEAD_LOOKUP_GROUP`
journals (IN on both the bucket and the id). Every statement is an idempotent upsert or delete,
so the driver may retry it. Synchronous on purpose: the replicator runs inside Spark tasks.

With tracing on, each call is a Cassandra CLIENT span under the caller's (the replicator's slice
span): `SELECT <table>` for reads (the requests made), `BATCH` for each wave of writes (its CQL
batches and statements), `INSERT`/`UPDATE <table>` for single writes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Any

from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent
from cassandra.query import BatchStatement
from cassandra.query import BatchType
from cassandra.query import PreparedStatement
from cassandra.query import Statement
from opentelemetry.trace import StatusCode

from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION
from kjournal.cassandra.java_lower import JavaVersion
from kjournal.cassandra.segments import METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import OLD_METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import journal_segment
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.session import READ_PROFILE
from kjournal.cassandra.session import WRITE_PROFILE
from kjournal.cassandra.session import driver_errors
from kjournal.cassandra.session import read_concurrently
from kjournal.cassandra.session import translate_error
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.spans import cql_span
from kjournal.cassandra.spans import statement_span
from kjournal.cassandra.statements import conflicts
from kjournal.cassandra.statements import journal
from kjournal.cassandra.statements import metajournal
from kjournal.cassandra.statements import pointer2
from kjournal.cassandra.statements import quarantine
from kjournal.fold.plan import DeleteHead
from kjournal.fold.plan import DeleteRow
from kjournal.fold.plan import DeleteRows
from kjournal.fold.plan import InsertHead
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import Step
from kjournal.fold.plan import UpdateHead
from kjournal.fold.plan import Write
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model.conflict import Conflict
from kjournal.model.head import DEFAULT_SEGMENT_SIZE
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.spans import conventions as sem

__all__ = [
    "DEFAULT_MAX_BATCH_BYTES",
    "DEFAULT_MAX_BATCH_STATEMENTS",
    "CassandraReplicatedStore",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH_BYTES = 40 * 1024
"""Below Cassandra's default batch_size_fail_threshold (50 KiB), with room for estimate error."""

DEFAULT_MAX_BATCH_STATEMENTS = 64
"""Statements per CQL batch: enough to make the driver's per-request cost small, few enough that one
coordinator's fan-out stays modest on a real cluster."""

_SMALL_STATEMENT = 160  # a head or delete statement in a CQL batch, roughly

_ROW_OVERHEAD = 96  # keys, seqNr, partition, offset, timestamp, uuid and framing, roughly
_VARIABLE_COLUMNS = tuple(
    journal.INSERT_COLUMNS.index(column)
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
    java_version: the Java of the Scala services sharing the keyspace (metajournal buckets).
    max_batch_bytes, max_batch_statements: bounds of one batch (see the module docstring).
    concurrency: requests in flight at once (per call).
    """

    def __init__(
        self,
        session: Session,
        tables: TableNames,
        *,
        segment_size: int = DEFAULT_SEGMENT_SIZE,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        max_batch_statements: int = DEFAULT_MAX_BATCH_STATEMENTS,
        concurrency: int = 64,
        java_version: JavaVersion = DEFAULT_JAVA_VERSION,
    ) -> None:
        if min(max_batch_bytes, max_batch_statements, concurrency) < 1:
            raise ValueError(
                "max_batch_bytes, max_batch_statements and concurrency must be positive"
            )
        self._session = session
        self._tables = tables
        self.segment_size = segment_size
        self._max_batch_bytes = max_batch_bytes
        self._max_batch_statements = max_batch_statements
        self._concurrency = concurrency
        self._java_version = java_version
        self._lock = threading.Lock()
        # Heads found in the old 100-bucket layout are written where they are
        # (docs/cassandra-schema.md).
        self._old_buckets: dict[Key, int] = {}

        self._journal = journal.StoreStatements.prepare(self._prepare, tables)
        self._metajournal = metajournal.StoreStatements.prepare(self._prepare, tables)
        self._pointer2 = pointer2.StoreStatements.prepare(self._prepare, tables)
        self._quarantine = quarantine.StoreStatements.prepare(self._prepare, tables)
        self._conflicts = conflicts.StoreStatements.prepare(self._prepare, tables).insert

    # ReplicatedStore

    def pointer2(self, topic: str, partition: int) -> int | None:
        row = self._one(self._pointer2.select, (topic, partition), f"reading pointer2 of {topic}")
        return None if row is None else int(row[0])

    def set_pointer2(
        self, topic: str, partition: int, offset: int, now: datetime, *, insert: bool
    ) -> None:
        bind = self._pointer2.bind_insert if insert else self._pointer2.bind_update
        statement = bind(topic, partition, offset, now)
        with (
            statement_span(statement),
            driver_errors(f"writing pointer2 of {topic}:{partition}"),
        ):
            self._session.execute(statement, execution_profile=WRITE_PROFILE)

    def heads(self, keys: Sequence[Key]) -> list[JournalHead | None]:
        """Both bucket layouts of up to `metajournal.HEAD_LOOKUP_GROUP` journals per query; the current wins."""
        buckets = [
            (
                metajournal_bucket(key.id, METAJOURNAL_BUCKETS, self._java_version),
                metajournal_bucket(key.id, OLD_METAJOURNAL_BUCKETS, self._java_version),
            )
            for key in keys
        ]
        args = metajournal.heads_select_args(keys, buckets)
        found: dict[tuple[str, str], dict[int, tuple[Any, ...]]] = {}
        for (topic, _, _), rows in zip(
            args,
            self._read_all(self._metajournal.select_heads, args, "reading journal heads"),
            strict=True,
        ):
            for segment, id, *head in rows:
                found.setdefault((topic, id), {})[segment] = tuple(head)
        heads: list[JournalHead | None] = []
        with self._lock:
            for key, (current, old) in zip(keys, buckets, strict=True):
                by_segment = found.get((key.topic, key.id), {})
                if current not in by_segment and old in by_segment:
                    self._old_buckets[key] = old
                else:
                    self._old_buckets.pop(key, None)
                row = by_segment.get(current, by_segment.get(old))
                heads.append(None if row is None else metajournal.journal_head_from_row(row))
        return heads

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        errors: list[Exception | None] = [None] * len(journals)
        with self._lock:
            buckets = [
                self._old_buckets.get(key)
                or metajournal_bucket(key.id, METAJOURNAL_BUCKETS, self._java_version)
                for key, _ in journals
            ]
        waves = max((len(steps) for _, steps in journals), default=0)
        for wave in range(waves):
            owners: list[set[int]] = []

            def requests(wave: int = wave, owners: list[set[int]] = owners) -> Iterator[Any]:
                # Consumed by the driver as requests complete (on its I/O thread, under its
                # lock), so statements are built while Cassandra works. It must not raise: a
                # journal whose statements cannot be built fails alone.
                batch = _CqlBatch()
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
                        buckets[index] = metajournal_bucket(
                            key.id, METAJOURNAL_BUCKETS, self._java_version
                        )
                    for statement, size in built:
                        if batch.statements and (
                            batch.size + size > self._max_batch_bytes
                            or len(batch.statements) >= self._max_batch_statements
                        ):
                            owners.append(batch.owners)
                            yield batch.request(), None
                            batch = _CqlBatch()
                        batch.add(statement, size, index)
                if batch.statements:
                    owners.append(batch.owners)
                    yield batch.request(), None

            with cql_span("BATCH", "journal", None, **{sem.WAVE: wave}) as batch_span:
                results = execute_concurrent(
                    self._session,
                    requests(),
                    concurrency=self._concurrency,
                    raise_on_first_error=False,
                    execution_profile=WRITE_PROFILE,
                )
                if batch_span is not None:
                    batch_span.set_attribute(sem.REQUESTS, len(owners))
                    batch_span.set_attribute(sem.DB_BATCH_SIZE, sum(len(o) for o in owners))
                    failed = sum(1 for ok, _ in results if not ok)
                    if failed:
                        batch_span.set_attribute(sem.REQUESTS_FAILED, failed)
                        batch_span.set_status(StatusCode.ERROR, "a CQL batch failed")
            for indexes, (ok, outcome) in zip(owners, results, strict=True):
                if ok:
                    continue
                for index in indexes:
                    if errors[index] is None:
                        key = journals[index][0]
                        errors[index] = translate_error(outcome, f"replicating {key}") or outcome
        with self._lock:
            for (key, steps), error in zip(journals, errors, strict=True):
                if error is None and any(
                    isinstance(w, InsertHead | DeleteHead) for step in steps for w in step
                ):
                    self._old_buckets.pop(key, None)  # a new head goes to the current layout
        return errors

    def stored_events(
        self, key: Key, head: JournalHead, seq_nrs: Collection[int]
    ) -> dict[int, EventRecord]:
        if not seq_nrs:
            return {}
        low, high = min(seq_nrs), max(seq_nrs)
        size = head.segment_size
        args = [
            (
                key.id,
                key.topic,
                segment,
                max(low, segment * size + 1),
                min(high, (segment + 1) * size),
            )
            for segment in range(journal_segment(low, size), journal_segment(high, size) + 1)
        ]
        decode = journal.EventRowDecoder(key)
        found: dict[int, EventRecord] = {}
        for rows in self._read_all(self._journal.select, args, f"reading events of {key}"):
            for record in decode.page(rows):
                seq = record.seq_nr
                if seq in seq_nrs and (
                    seq not in found
                    or record.partition_offset.offset < found[seq].partition_offset.offset
                ):
                    found[seq] = record
        return found

    def record_conflicts(self, records: Sequence[Conflict]) -> None:
        statements = [
            (self._conflicts.bind(conflicts.insert_values(conflict)), None) for conflict in records
        ]
        with (
            statement_span(self._conflicts, **{sem.DB_BATCH_SIZE: len(statements)}),
            driver_errors("recording conflicting duplicates"),
        ):
            execute_concurrent(
                self._session,
                statements,
                concurrency=self._concurrency,
                execution_profile=WRITE_PROFILE,
            )

    def quarantine(self, records: Sequence[QuarantinedRecord]) -> None:
        statements = [
            (self._quarantine.insert.bind(quarantine.insert_values(record)), None)
            for record in records
        ]
        with (
            statement_span(self._quarantine.insert, **{sem.DB_BATCH_SIZE: len(statements)}),
            driver_errors("writing quarantined records"),
        ):
            execute_concurrent(
                self._session,
                statements,
                concurrency=self._concurrency,
                execution_profile=WRITE_PROFILE,
            )

    def quarantined_from(self, topic: str, partition: int, ids: Collection[str]) -> dict[str, int]:
        what = f"reading quarantined journals of {topic}"
        # One scan of the (normally tiny) set of quarantined journals per slice, rather than a
        # query per journal; only the journals found there are looked at closer.
        wanted = set(ids)
        with statement_span(self._quarantine.journals), driver_errors(what):
            listed = self._session.execute(
                self._quarantine.journals.bind(()), execution_profile=READ_PROFILE
            )
            ids = [id for listed_topic, id in listed if listed_topic == topic and id in wanted]
        results = self._read_all(
            self._quarantine.first_of_journal, [(topic, id) for id in ids], what
        )
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
                here = self._one(self._quarantine.first_in_partition, (topic, id, partition), what)
                found[id] = -1 if here is None else int(here[0])
        return found

    # Statements

    def _statements(self, key: Key, bucket: int, write: Write) -> Iterator[tuple[Statement, int]]:
        """The statements of one write, each with its estimated size in a CQL batch."""
        if isinstance(write, InsertRows):
            rows = journal.insert_rows(key, write.segment, write.events, write.meta_record_id)
            for statement, values in zip(self._journal.insert.bind_all(rows), rows, strict=True):
                yield statement, _estimate(values)
        elif isinstance(write, DeleteRows):
            yield self._journal.bind_delete(key, write.segment, write.to), _SMALL_STATEMENT
        elif isinstance(write, DeleteRow):
            values = (key.id, key.topic, write.segment, write.seq_nr, write.timestamp)
            yield self._journal.delete_row.bind(values), _SMALL_STATEMENT
        elif isinstance(write, InsertHead):
            # A new head always goes to the current layout, whatever held the previous one.
            current = metajournal_bucket(key.id, METAJOURNAL_BUCKETS, self._java_version)
            created = write.created.astimezone(UTC)
            statement = self._metajournal.bind_insert(
                key, current, write.head, created, write.origin
            )
            yield statement, _SMALL_STATEMENT
        elif isinstance(write, UpdateHead):
            yield self._metajournal.bind_update(key, bucket, write), _SMALL_STATEMENT
        else:
            assert isinstance(write, DeleteHead)
            yield self._metajournal.bind_delete(key, bucket), _SMALL_STATEMENT

    # Execution

    def _prepare(self, cql: str) -> PreparedStatement:
        with driver_errors(f"preparing {cql!r}"):
            statement = self._session.prepare(cql)
        statement.is_idempotent = True
        return statement

    def _one(self, statement: PreparedStatement, values: tuple[Any, ...], what: str) -> Any:
        with statement_span(statement), driver_errors(what):
            return self._session.execute(
                statement.bind(values), execution_profile=READ_PROFILE
            ).one()

    def _read_all(
        self, statement: PreparedStatement, args: Sequence[tuple[Any, ...]], what: str
    ) -> list[list[Any]]:
        """The rows of each bound statement, read concurrently; the first error is raised."""
        if not args:
            return []
        with statement_span(statement, **{sem.REQUESTS: len(args)}), driver_errors(what):
            return read_concurrently(self._session, statement, args, self._concurrency)


class _CqlBatch:
    """Statements bound for one request, and the journals (indexes) they belong to."""

    def __init__(self) -> None:
        self.statements: list[Statement] = []
        self.owners: set[int] = set()
        self.size = 0

    def add(self, statement: Statement, size: int, owner: int) -> None:
        self.statements.append(statement)
        self.owners.add(owner)
        self.size += size

    def request(self) -> Statement:
        if len(self.statements) == 1:
            return self.statements[0]
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        for statement in self.statements:
            batch.add(statement)
        batch.is_idempotent = True
        return batch


def _estimate(values: tuple[Any, ...]) -> int:
    """Roughly the bytes a journal row adds to a CQL batch: its variable-length values dominate."""
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
