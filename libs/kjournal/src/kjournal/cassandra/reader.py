"""CassandraEventualReader: the read side of the eventual store (ports.EventualReader).

Everything streams through session.Pager, a page at a time; statements are prepared once, when
the reader is created.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

from cassandra.cluster import Session
from cassandra.query import PreparedStatement

from kjournal.cassandra.java_lower import DEFAULT_JAVA_VERSION, JavaVersion
from kjournal.cassandra.segments import (
    METAJOURNAL_BUCKETS,
    OLD_METAJOURNAL_BUCKETS,
    journal_segment,
    metajournal_bucket,
)
from kjournal.cassandra.session import Pager, Row, first_page, prepare
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import journal, metajournal, pointer2, quarantine
from kjournal.cassandra.statements.journal import META_RECORD_ID_INDEX, EventRowDecoder
from kjournal.errors import DataIntegrityError
from kjournal.model import EventRecord, Key, SeqNr
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord

__all__ = ["CassandraEventualReader", "DataIntegrity"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DataIntegrity:
    """Checks on the rows a read returns (the Scala library's `DataIntegrityConfig`).

    seq_nr_uniqueness: a seqNr seen twice (a fork replicated from two writers) fails the read.
    correlate_events_with_meta: drop rows whose `meta_record_id` is not the head's `record_id`
        (leftovers of an incomplete purge); when off they are returned and logged.
    """

    seq_nr_uniqueness: bool = True
    correlate_events_with_meta: bool = False


@dataclass(frozen=True, slots=True)
class _Statements:
    journal: PreparedStatement
    head: PreparedStatement
    pointer2: PreparedStatement
    ids: PreparedStatement
    quarantine: PreparedStatement


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
            "head": metajournal.head_select_cql(tables),
            "pointer2": pointer2.select_cql(tables),
            "ids": metajournal.ids_select_cql(tables),
            "quarantine": quarantine.select_cql(tables),
        }
        prepared: dict[str, PreparedStatement] = {}
        for name, cql in cqls.items():
            statement = await prepare(session, cql)
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
        """The head in bucket(10 000), else in the old bucket(100); both are asked at once."""
        what = f"reading the head of {key}"
        buckets = dict.fromkeys(
            (
                metajournal_bucket(key.id, METAJOURNAL_BUCKETS, self._java_version),
                metajournal_bucket(key.id, OLD_METAJOURNAL_BUCKETS, self._java_version),
            )
        )
        pagers = [
            self._pager(self._statements.head, (key.topic, bucket, key.id), what)
            for bucket in buckets
        ]
        try:
            for pager in pagers:
                rows = await pager.next_page()
                if rows:
                    return metajournal.journal_head_from_row(rows[0])
            return None
        finally:
            for pager in pagers:
                pager.close()

    async def events(
        self, key: Key, head: JournalHead, from_: SeqNr
    ) -> AsyncGenerator[EventRecord, None]:
        """Events with max(from_, delete_to + 1) ≤ seqNr ≤ head.seq_nr, ascending.

        Every segment up to journal_segment(head.seq_nr) is read, so a seqNr gap at a segment
        boundary does not end the read early. Rows above head.seq_nr belong to a replication
        still in progress (rows are written before the head) and are left to the Kafka tail.
        """
        start = from_
        if head.delete_to is not None and start <= head.delete_to:
            start = SeqNr(head.delete_to + 1)
        last = head.seq_nr
        if start > last:
            return
        size = head.segment_size
        decode = EventRowDecoder()
        check = _RowChecks(key, head, self._integrity, start)
        for segment in range(journal_segment(start, size), journal_segment(last, size) + 1):
            low = max(start, segment * size + 1)
            high = min(last, (segment + 1) * size)
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

    async def ids(self, topic: str) -> AsyncGenerator[str, None]:
        """Every journal id with a head in `topic`, each once, in bucket order.

        The 10 000 buckets include the 100 of the old layout. A few buckets are read at once
        (`ids_concurrency`), each page by page. An id found in its old bucket is only reported if
        its current bucket does not also hold it.
        """
        statement = self._statements.ids
        window: deque[tuple[int, Pager]] = deque()
        buckets = iter(range(METAJOURNAL_BUCKETS))

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

    async def _has_head(self, topic: str, bucket: int, id_: str) -> bool:
        rows = await first_page(
            self._session,
            self._statements.head.bind((topic, bucket, id_)),
            what=f"reading the head of {topic}:{id_}",
        )
        return bool(rows)

    async def quarantined(self, key: Key) -> QuarantinedRecord | None:
        rows = await first_page(
            self._session,
            self._statements.quarantine.bind((key.topic, key.id)),
            what=f"reading quarantined records of {key}",
        )
        return quarantine.quarantined_record_from_row(rows[0]) if rows else None


class _RowChecks:
    """Data-integrity checks over one read's rows, a page at a time."""

    __slots__ = ("_correlate", "_expected", "_key", "_record_id", "_unique", "_warned")

    def __init__(self, key: Key, head: JournalHead, integrity: DataIntegrity, start: int) -> None:
        self._key = key
        self._unique = integrity.seq_nr_uniqueness
        self._correlate = integrity.correlate_events_with_meta
        # As text: the journal query returns meta_record_id CAST to text.
        self._record_id = None if head.record_id is None else str(head.record_id)
        self._expected = start
        self._warned = False

    def page(self, rows: Sequence[Row]) -> Sequence[Row]:
        """The rows to return, in order; raises FormatError on a repeated seqNr."""
        if self._record_id is not None:
            wanted = self._record_id
            if any(row[META_RECORD_ID_INDEX] != wanted for row in rows):
                rows = [row for row in rows if self._correlated(row)]
        if self._unique:
            expected = self._expected
            for row in rows:
                seq = row[0]
                if seq < expected:
                    raise DataIntegrityError(
                        f"data integrity violated: seqNr {seq} of {self._key} appears more than "
                        "once in the eventual store (rows of two writers, a fork?)"
                    )
                expected = seq + 1
            self._expected = expected
        return rows

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
