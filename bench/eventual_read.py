"""Read throughput of CassandraEventualReader.events against raw cassandra-driver SELECTs.

    uv run python -m bench.eventual_read [--events 100000] [--payload json] [--fetch-size 1000]

Writes one journal of N events into a throw-away keyspace on the local node (kjournal-dev's
Cassandra, port from KJOURNAL_DEV_CASSANDRA_PORT), then times, in the same run and alternating:

(a)  `CassandraEventualReader.events` over the whole journal, yielding decoded EventRecords;
(b)  the same rows and columns through the driver's synchronous paging, same fetch size and row
     factory, decoding nothing: the driver's floor for these rows (the target is a/b ≥ 0.8);
(b') the reader's own statement (meta_record_id, tags and headers returned as text) the same
     way, to show how much of (a) is the driver and how much is kjournal's decoding.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from itertools import islice

import cassandra
from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent
from cassandra.query import BatchStatement
from cassandra.query import BatchType
from cassandra.query import PreparedStatement
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.segments import journal_segment
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.session import READ_PROFILE
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements import journal
from kjournal.cassandra.statements import metajournal
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import Payload
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal.model.head import JournalHead

from bench._host import cpu_model

KEY = Key("journal", "bench-entity")
EVENTS_PER_APPEND = 5
BATCH_ROWS = 100


def payload_of(kind: str, n: int) -> Payload | None:
    if kind == "mixed":
        kind = ("json", "text", "binary", "none")[n % 4]
    if kind == "json":
        return JsonPayload(
            {
                "type": "ItemAdded",
                "cart": "c-42",
                "item": {"sku": f"sku-{n}", "qty": n % 7},
                "price": 12.5,
                "tags": ["a", "b"],
            }
        )
    if kind == "text":
        return TextPayload(f"event number {n} with a short text body")
    if kind == "binary":
        return BinaryPayload(os.urandom(64))
    return None


def event_records(count: int, kind: str) -> Iterator[EventRecord]:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    metadata = RecordMetadata(HeaderMetadata({"trace": "abc"}))
    for n in range(1, count + 1):
        append = (n - 1) // EVENTS_PER_APPEND
        yield EventRecord(
            event=Event(SeqNr(n), frozenset({"cart"}), payload_of(kind, n)),
            timestamp=base + timedelta(milliseconds=append),
            partition_offset=PartitionOffset(3, 1000 + append),
            origin="bench-host",
            version="0.1.0",
            metadata=metadata,
            headers={"source": "bench"},
        )


def insert_journal(
    session: Session, tables: TableNames, count: int, segment_size: int, kind: str
) -> float:
    record_id = uuid.uuid4()
    insert = session.prepare(journal.insert_cql(tables))

    def batches() -> Iterator[tuple[BatchStatement, tuple[()]]]:
        records = event_records(count, kind)
        while chunk := list(islice(records, BATCH_ROWS)):
            # One batch per journal segment: single-partition unlogged batches are cheap.
            by_segment: dict[int, BatchStatement] = {}
            for record in chunk:
                segment = journal_segment(record.seq_nr, segment_size)
                batch = by_segment.setdefault(segment, BatchStatement(BatchType.UNLOGGED))
                batch.add(insert, journal.insert_values(KEY, segment, record, record_id))
            for batch in by_segment.values():
                yield batch, ()

    started = time.perf_counter()
    for ok, result in execute_concurrent(
        session, batches(), concurrency=16, results_generator=True
    ):
        if not ok:
            raise result
    head = JournalHead(
        PartitionOffset(3, 1000 + count), segment_size, SeqNr(count), record_id=record_id
    )
    columns = ("topic", "segment", "id", *metajournal.HEAD_COLUMNS)
    insert_head = session.prepare(
        f"INSERT INTO {tables.qualified(tables.metajournal)} ({', '.join(columns)}) "
        f"VALUES ({', '.join('?' for _ in columns)})"
    )
    session.execute(
        insert_head,
        (KEY.topic, metajournal_bucket(KEY.id), KEY.id, *metajournal.journal_head_values(head)),
    )
    return time.perf_counter() - started


async def read_with_reader(reader: CassandraEventualReader, head: JournalHead) -> int:
    count = 0
    async for _ in reader.events(KEY, head, SeqNr(1)):
        count += 1
    return count


def read_raw(session: Session, select: PreparedStatement, head: JournalHead) -> int:
    count = 0
    for segment in range(journal_segment(head.seq_nr, head.segment_size) + 1):
        bound = select.bind((KEY.id, KEY.topic, segment, 1, head.seq_nr))
        for _ in session.execute(bound, execution_profile=READ_PROFILE):
            count += 1
    return count


def raw_statements(
    session: Session, tables: TableNames, fetch_size: int
) -> tuple[PreparedStatement, PreparedStatement]:
    """(same columns as stored, the reader's own statement)."""
    native = session.prepare(
        f"SELECT {', '.join(journal.SELECT_COLUMNS)} FROM {tables.qualified(tables.journal)} "
        "WHERE id = ? AND topic = ? AND segment = ? AND seq_nr >= ? AND seq_nr <= ?"
    )
    own = session.prepare(journal.select_cql(tables))
    native.fetch_size = own.fetch_size = fetch_size
    return native, own


def timed(run: Callable[[], int]) -> tuple[float, int]:
    started = time.perf_counter()
    count = run()
    return time.perf_counter() - started, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--segment-size", type=int, default=10_000)
    parser.add_argument("--fetch-size", type=int, default=1000)
    parser.add_argument(
        "--payload", choices=("json", "text", "binary", "none", "mixed"), default="json"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the keyspace afterwards")
    args = parser.parse_args()

    settings = CassandraSettings(
        port=int(os.environ.get("KJOURNAL_DEV_CASSANDRA_PORT", "9042")), fetch_size=args.fetch_size
    )
    keyspace = f"kjbench_{uuid.uuid4().hex[:10]}"
    session = connect(settings)
    try:
        migrate(session, CassandraSettings(keyspace=keyspace))
        tables = TableNames(keyspace=keyspace)
        print(
            f"host: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"cassandra-driver {cassandra.__version__}, load average {os.getloadavg()[0]:.1f} "
            "(Cassandra runs on the same host)"
        )
        print(
            f"journal: {args.events} events, payload {args.payload}, segment size "
            f"{args.segment_size}, fetch size {args.fetch_size}, keyspace {keyspace}"
        )
        took = insert_journal(session, tables, args.events, args.segment_size, args.payload)
        print(
            f"insert: {took:.1f} s ({args.events / took:,.0f} events/s, unlogged batches of "
            f"≤{BATCH_ROWS} rows, 16 in flight)"
        )
        asyncio.run(compare(session, tables, args))
    finally:
        if not args.keep:
            session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
        session.cluster.shutdown()


async def compare(session: Session, tables: TableNames, args: argparse.Namespace) -> None:
    reader = await CassandraEventualReader.create(session, tables, fetch_size=args.fetch_size)
    head = await reader.head(KEY)
    assert head is not None
    assert head.seq_nr == args.events
    native, own = raw_statements(session, tables, args.fetch_size)

    async def run_a() -> tuple[float, int]:
        started = time.perf_counter()
        count = await read_with_reader(reader, head)
        return time.perf_counter() - started, count

    async def run_native() -> tuple[float, int]:
        return timed(lambda: read_raw(session, native, head))

    async def run_own() -> tuple[float, int]:
        return timed(lambda: read_raw(session, own, head))

    runs: dict[str, Callable[[], Awaitable[tuple[float, int]]]] = {
        "a": run_a,
        "b": run_native,
        "b'": run_own,
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    # Round 0 warms caches up and is not counted. The order rotates from round to round, and
    # ratios are taken within a round, so a burst of load elsewhere hits all three alike.
    for round_ in range(args.rounds + 1):
        for name in names[round_ % 3 :] + names[: round_ % 3]:
            seconds, rows = await runs[name]()
            assert rows == args.events, (name, rows)
            if round_:
                rates[name].append(rows / seconds)
        if round_:
            print(
                f"round {round_}: "
                + ", ".join(f"({name}) {rates[name][-1]:,.0f}/s" for name in names)
                + f"; a/b {rates['a'][-1] / rates['b'][-1]:.2f}"
            )
    a, b, b_own = (statistics.median(rates[name]) for name in names)
    a_b = statistics.median(x / y for x, y in zip(rates["a"], rates["b"], strict=True))
    a_own = statistics.median(x / y for x, y in zip(rates["a"], rates["b'"], strict=True))
    print(f"(a)  CassandraEventualReader.events:         {a:,.0f} events/s (median)")
    print(f"(b)  raw driver SELECT, columns as stored:   {b:,.0f} rows/s (median)")
    print(f"(b') raw driver SELECT, the reader's query:  {b_own:,.0f} rows/s (median)")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"ratio a/b:  {a_b:.2f} (median of per-round ratios; target ≥ 0.8)")
    print(f"ratio a/b': {a_own:.2f} (kjournal's decoding against the same driver work)")


if __name__ == "__main__":
    main()
