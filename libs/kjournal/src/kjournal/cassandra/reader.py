"""CassandraEventualReader: the read side of the eventual store (ports.EventualReader).

Everything streams through session.Pager, a page at a time; statements are prepared once, when
the reader is created.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncGenerator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cassandra.cluster import Session
from cassandra.query import PreparedStatement

from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION
from kjournal.cassandra.java_lower import JavaVersion
from kjournal.cassandra.segments import METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import OLD_METAJOURNAL_BUCKETS
from kjournal.cassandra.segments import journal_segment
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.session import Pager
from kjournal.cassandra.session import Row
from kjournal.cassandra.session import first_page
from kjournal.cassandra.session import prepare
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import conflicts
from kjournal.cassandra.statements import journal
from kjournal.cassandra.statements import metajournal
from kjournal.cassandra.statements import pointer2
from kjournal.cassandra.statements import quarantine
from kjournal.cassandra.statements.journal import META_RECORD_ID_INDEX
from kjournal.cassandra.statements.journal import SELECT_COLUMNS
from kjournal.cassandra.statements.journal import EventRowDecoder
from kjournal.errors import SchemaError
from kjournal.model import SEQ_NR_MAX
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.conflict import Conflict
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord

__all__ = ["CassandraEventualReader", "DataIntegrity"]

log = logging.getLogger(__name__)

_OFFSET_INDEX = SELECT_COLUMNS.index("offset")
_PARTITIONS_SCANNED = 3 * METAJOURNAL_BUCKETS  # partition keys scanned to find a topic's buckets


@dataclass(frozen=True, slots=True)
class DataIntegrity:
    """Checks on the rows a read returns (the Scala library's `DataIntegrityConfig`).

    correlate_events_with_meta: drop rows whose `meta_record_id` is not the head's `record_id`
        (leftovers of an incomplete purge); when off they are returned and logged.

    A seqNr stored twice (kafka-journal's replicator stores a resent append's events again) is
    not an error here: the copy with the lowest offset, the first appended, is returned.
    """

    correlate_events_with_meta: bool = False


@dataclass(frozen=True, slots=True)
class _Statements:
    journal: PreparedStatement
    head: PreparedStatement
    pointer2: PreparedStatement
    ids: PreparedStatement
    partitions: PreparedStatement
    # kjournal's own tables, which a keyspace created by kafka-journal does not have
    quarantine: PreparedStatement | None
    quarantined_journals: PreparedStatement | None
    conflicts: PreparedStatement | None


class CassandraEventualReader:
    """Heads, events, pointers, ids and quarantined records of journals stored in Cassandra.

    Create with `await CassandraEventualReader.create(session, tables)`; the session stays the
    caller's (see session.open_session).
    """

    def __init__(
        self,
        session: Session,
        statements: _Statements,
        *,
        integrity: DataIntegrity = DataIntegrity(),
        ids_concurrency: int = 16,
        java_version: JavaVersion = DEFAULT_JAVA_VERSION,
    ) -> None:
        if ids_concurrency < 1:
            raise ValueError("ids_concurrency must be at least 1")
        self._session = session
        self._statements = statements
        self._integrity = integrity
        self._ids_concurrency = ids_concurrency
        self._java_version = java_version

    @classmethod
    async def create(
        cls,
        session: Session,
        tables: TableNames,
        *,
        fetch_size: int | None = None,
        integrity: DataIntegrity = DataIntegrity(),
        ids_concurrency: int = 16,
        java_version: JavaVersion = DEFAULT_JAVA_VERSION,
    ) -> CassandraEventualReader:
        """Prepare the statements; `fetch_size` (rows per page) defaults to the session's.

        `java_version`: the Java of the Scala services sharing the keyspace (metajournal buckets).
        """
        cqls = {
            "journal": journal.select_cql(tables),
            "head": metajournal.head_in_buckets_select_cql(tables),
            "pointer2": pointer2.select_cql(tables),
            "ids": metajournal.ids_select_cql(tables),
            "partitions": metajournal.partitions_select_cql(tables),
        }
        optional = {
            "quarantine": quarantine.select_cql(tables),
            "quarantined_journals": quarantine.journals_cql(tables),
            "conflicts": conflicts.select_cql(tables),
        }
        prepared: dict[str, PreparedStatement | None] = {}
        for name, cql in {**cqls, **optional}.items():
            try:
                statement = await prepare(session, cql)
            except SchemaError:
                if name not in optional:
                    raise
                log.warning(
                    "keyspace %s has no %s table (a keyspace kafka-journal created?): reads "
                    "work, but %s are unknown; the schema step adds it",
                    tables.keyspace,
                    name,
                    "quarantined records" if name == "quarantine" else "conflicting duplicates",
                )
                prepared[name] = None
                continue
            statement.is_idempotent = True
            if fetch_size is not None:
                statement.fetch_size = fetch_size
            prepared[name] = statement
        return cls(
            session,
            _Statements(**prepared),
            integrity=integrity,
            ids_concurrency=ids_concurrency,
            java_version=java_version,
        )

    def _pager(self, statement: PreparedStatement, values: tuple[Any, ...], what: str) -> Pager:
        return Pager(self._session, statement.bind(values), what=what)

    async def pointer2(self, topic: str, partition: int) -> int | None:
        rows = await first_page(
            self._session,
            self._statements.pointer2.bind((topic, partition)),
            what=f"reading pointer2 of {topic}:{partition}",
        )
        if not rows:
            return None
        offset: int | None = rows[0][0]
        return offset

    async def head(self, key: Key) -> JournalHead | None:
        """The head in bucket(10 000), else in the old bucket(100): both asked in one request."""
        current = metajournal_bucket(key.id, METAJOURNAL_BUCKETS, self._java_version)
        old = metajournal_bucket(key.id, OLD_METAJOURNAL_BUCKETS, self._java_version)
        rows = await first_page(
            self._session,
            self._statements.head.bind((key.topic, sorted({current, old}), key.id)),
            what=f"reading the head of {key}",
        )
        found = {row[0]: row[1:] for row in rows}
        row = found.get(current, found.get(old))
        return None if row is None else metajournal.journal_head_from_row(row)

    async def events(
        self, key: Key, head: JournalHead, from_: SeqNr
    ) -> AsyncGenerator[EventRecord, None]:
        """Events with seqNr ≥ max(from_, delete_to + 1), ascending, each seqNr once.

        Every segment up to journal_segment(head.seq_nr) is read whole, so a seqNr gap at a
        segment boundary does not end the read early, and rows above head.seq_nr in those
        segments are returned too: a replication still in progress writes rows before the head
        (the reader's merge skips the tail's copies of them), and kafka-journal's replicator moves
        a head back to a resent append's last seqNr, leaving later rows above it. A seqNr stored
        twice (that replicator stores a resent append again) is returned once: the copy with the
        lowest offset.
        """
        start = from_
        if head.delete_to is not None and start <= head.delete_to:
            start = SeqNr(head.delete_to + 1)
        if start > SEQ_NR_MAX:  # deleted to the last seqNr there can be
            return
        size = head.segment_size
        first_segment, last_segment = (
            journal_segment(start, size),
            journal_segment(head.seq_nr, size),
        )
        decode = EventRowDecoder(key)
        check = _RowChecks(key, head, self._integrity)
        for segment in range(first_segment, last_segment + 1):
            low = max(start, segment * size + 1)
            high = min((segment + 1) * size, SEQ_NR_MAX)  # a bound past it is no bigint
            pager = self._pager(
                self._statements.journal,
                (key.id, key.topic, segment, low, high),
                f"reading {key} segment {segment}",
            )
            try:
                while (page := await pager.next_page()) is not None:
                    for record in decode.page(check.page(page)):
                        yield record
            finally:
                pager.close()
            for record in decode.page(check.flush()):  # the segment's last seqNr
                yield record

    async def ids(self, topic: str) -> AsyncGenerator[str, None]:
        """Every journal id with a head in `topic`, each once, in bucket order.

        The 10 000 buckets include the 100 of the old layout; only those the topic uses are read
        (`_buckets`). A few buckets are read at once (`ids_concurrency`), each page by page. An
        id found in its old bucket is only reported if its current bucket does not also hold it.
        """
        statement = self._statements.ids
        window: deque[tuple[int, Pager]] = deque()
        buckets = iter(await self._buckets(topic))

        def fill() -> None:
            while len(window) < self._ids_concurrency:
                bucket = next(buckets, None)
                if bucket is None:
                    return
                pager = self._pager(
                    statement, (topic, bucket), f"listing journals of {topic} in bucket {bucket}"
                )
                window.append((bucket, pager))

        try:
            fill()
            while window:
                bucket, pager = window[0]
                page = await pager.next_page()
                if page is None:
                    window.popleft()
                    fill()
                    continue
                for (id_,) in page:
                    current = metajournal_bucket(id_, METAJOURNAL_BUCKETS, self._java_version)
                    if bucket == current:
                        yield id_
                    elif bucket == metajournal_bucket(
                        id_, OLD_METAJOURNAL_BUCKETS, self._java_version
                    ):
                        if not await self._has_head(topic, current, id_):
                            yield id_
                    else:
                        log.warning(
                            "metajournal row %s:%s sits in bucket %d, where no reader looks",
                            topic,
                            id_,
                            bucket,
                        )
        finally:
            for _, pager in window:
                pager.close()

    async def _buckets(self, topic: str) -> Sequence[int]:
        """The buckets holding heads of `topic`, from one scan of the table's partition keys
        while it has at most `_PARTITIONS_SCANNED` of them (a table of few journals, or of one
        topic); beyond that, every bucket, each asked (a query per bucket costs less than
        scanning the partitions of many topics)."""
        pager = self._pager(self._statements.partitions, (), "listing the metajournal partitions")
        used: set[int] = set()
        seen = 0
        try:
            while (page := await pager.next_page()) is not None:
                for row_topic, bucket in page:
                    if row_topic == topic:
                        used.add(bucket)
                seen += len(page)
                if seen > _PARTITIONS_SCANNED:
                    return range(METAJOURNAL_BUCKETS)
        finally:
            pager.close()
        return sorted(used)

    async def _has_head(self, topic: str, bucket: int, id_: str) -> bool:
        rows = await first_page(
            self._session,
            self._statements.head.bind((topic, [bucket], id_)),
            what=f"reading the head of {topic}:{id_}",
        )
        return bool(rows)

    @property
    def quarantine_known(self) -> bool:
        """Whether the keyspace has kjournal's quarantine table (kafka-journal's has not)."""
        return self._statements.quarantine is not None

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        statement = self._statements.quarantine
        if statement is None:
            return None
        rows = await first_page(
            self._session,
            statement.bind((key.topic, key.id)),
            what=f"reading quarantined records of {key}",
        )
        return quarantine.quarantined_record_from_row(rows[0]) if rows else None

    async def quarantined_ids(self, topic: str) -> frozenset[str]:
        statement = self._statements.quarantined_journals
        if statement is None:
            return frozenset()
        pager = self._pager(statement, (), "listing quarantined journals")
        try:
            return frozenset(
                [id_ async for quarantined, id_ in pager.rows() if quarantined == topic]
            )
        finally:
            pager.close()

    async def conflicts(self, key: Key, limit: int) -> list[Conflict] | None:
        """None where the keyspace has no conflicts table."""
        statement = self._statements.conflicts
        if statement is None:
            return None
        pager = self._pager(statement, (key.topic, key.id, limit), f"reading conflicts of {key}")
        try:
            return [conflicts.conflict_from_row(row) async for row in pager.rows()]
        finally:
            pager.close()


class _RowChecks:
    """What a read returns of the rows, a page at a time: each seqNr once (the copy with the
    lowest offset), and rows of another head incarnation dropped or logged (DataIntegrity).

    Rows come ordered by (seqNr, timestamp), so copies of one seqNr are adjacent; the last row
    of a page is held back until the next page (or `flush`) shows whether a copy follows.
    """

    __slots__ = ("_correlate", "_key", "_pending", "_record_id", "_warned", "_warned_duplicate")

    def __init__(self, key: Key, head: JournalHead, integrity: DataIntegrity) -> None:
        self._key = key
        self._correlate = integrity.correlate_events_with_meta
        # As text: the journal query returns meta_record_id CAST to text.
        self._record_id = None if head.record_id is None else str(head.record_id)
        self._pending: Row | None = None
        self._warned = False
        self._warned_duplicate = False

    def page(self, rows: Sequence[Row]) -> list[Row]:
        """The rows to return, in order."""
        if self._record_id is not None:
            wanted = self._record_id
            if any(row[META_RECORD_ID_INDEX] != wanted for row in rows):
                rows = [row for row in rows if self._correlated(row)]
        out: list[Row] = []
        pending = self._pending
        for row in rows:
            if pending is not None and row[0] == pending[0]:
                if row[_OFFSET_INDEX] < pending[_OFFSET_INDEX]:
                    pending = row
                self._duplicate(row[0])
                continue
            if pending is not None:
                out.append(pending)
            pending = row
        self._pending = pending
        return out

    def flush(self) -> list[Row]:
        pending, self._pending = self._pending, None
        return [] if pending is None else [pending]

    def _duplicate(self, seq_nr: int) -> None:
        if not self._warned_duplicate:
            self._warned_duplicate = True
            log.warning(
                "%s: seqNr %d is stored more than once (a resent append replicated by "
                "kafka-journal?); the copy with the lowest offset is returned (maybe more)",
                self._key,
                seq_nr,
            )

    def _correlated(self, row: Row) -> bool:
        meta_record_id = row[META_RECORD_ID_INDEX]
        if meta_record_id == self._record_id:
            return True
        kind = "has no meta_record_id" if meta_record_id is None else "belongs to a purged head"
        if self._correlate:
            log.error("data integrity: %s seqNr %d %s; skipped", self._key, row[0], kind)
            return False
        if not self._warned:
            self._warned = True
            log.warning("data integrity: %s seqNr %d %s (maybe more rows)", self._key, row[0], kind)
        return True
