"""Small reads of replicated journals over HTTP, one keep-alive client, against a raw
cassandra-driver SELECT of the same rows in the same run.

    uv run python -m bench.small_reads [--journals 100] [--events 10] [--rounds 10]

Uses kjournal-dev's Kafka and Cassandra (started if they are not running, as
bench.replication_spark does; `scripts/dev up` first is the usual way). On a fresh topic
(`--partitions`, default 8) and a fresh keyspace, both removed at the end, it starts its own
reader, a writer linked to it (tracing at the Helm chart's default sampler) and a replicator of
that topic alone (Spark, local[2]); appends `--journals` journals of `--events` events through
the writer (`kjournal.client`, one append each), and waits until the reader's replication status
of the topic (`GET /v1/topics/{topic}/replication`) shows every partition replicated up to the
last append. Then it stops the replicator (`--keep-replicator`: it keeps running, as it does in
production, here on the same two cores) and, `--rounds` times after one untimed warm-up round,
for each journal in turn:

* `GET /v1/journals/{topic}/{id}/pointer` (its seqNr);
* `GET /v1/journals/{topic}/{id}/events` (the journal's events, NDJSON, body read whole);

both over one httpx client that keeps its connection to the reader alive; and
* the `journal` table rows of that journal through the cassandra-driver, synchronously: the
  reader's own statement (kjournal.cassandra.statements.journal.select_cql: every column the
  reader decodes, `seq_nr` from 1 to `--events`), with the reader's consistency, one query per
  segment.

Beside them, what a pointer that the fold answers from memory still waits for: `GET /healthz` of
the same reader over the same client (the service's HTTP stack with no work behind it: FastAPI's
full routing, which the pointer's hot route skips), and the journal's partition end asked of
Kafka by an aiokafka consumer in this process (the one round trip a read makes so that it sees
every append acknowledged before it; the pointer's p99 is at least this p99).

Prints p50, p90, p99 and max of each beside the issue's goals (pointer p99 < 5 ms, the journal's
read p99 < 10 ms), the host and its load average. No assertion is made; there is no pass mark.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from kjournal.cassandra.segments import journal_segment
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.statements.journal import select_cql
from kjournal.client import Client
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.replication import TopicReplication
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Platform

from bench._host import host_line
from bench._host import load_average
from bench._http import bench_keyspace
from bench._http import bench_topic
from bench._http import percentile
from bench._http import service_process
from bench._http import writers_reader
from bench._replicator import ReplicatorTarget
from bench._replicator import replicator
from bench._tracing import tracing_env

POINTER_P99_GOAL_MS = 5.0  # issue 40
READ_P99_GOAL_MS = 10.0
PAYLOAD: dict[str, JsonValue] = {"kind": "order-line", "sku": "ABC-123", "qty": 3}
POLL_S = 0.2  # how often the replication status is asked while waiting for it


@dataclass(frozen=True)
class Summary:
    p50: float
    p90: float
    p99: float
    max: float
    count: int


def summarize(samples_ms: list[float]) -> Summary:
    return Summary(
        percentile(samples_ms, 0.5),
        percentile(samples_ms, 0.9),
        percentile(samples_ms, 0.99),
        max(samples_ms, default=float("nan")),
        len(samples_ms),
    )


def caught_up(status: TopicReplication, ends: Mapping[int, int]) -> bool:
    """Whether the reader's replication status shows the topic replicated: no lag, and pointer2
    of each partition at or past the last offset appended there (`ends`: partition → that
    offset + 1)."""
    if status.lag != 0:
        return False
    pointer2 = {p.partition: p.pointer2 for p in status.partitions}
    return all(
        end <= 0 or ((offset := pointer2.get(partition)) is not None and offset >= end - 1)
        for partition, end in ends.items()
    )


def segments_of(events: int, segment_size: int) -> range:
    """The `journal.segment`s holding seqNrs 1..events."""
    return range(journal_segment(1, segment_size), journal_segment(events, segment_size) + 1)


def wait_replicated(
    client: Client,
    topic: str,
    ends: Mapping[int, int],
    alive: Callable[[], None],
    timeout_s: float,
) -> float:
    """Ask the reader's replication status until `caught_up`; the seconds that took."""
    started = time.monotonic()
    while True:
        alive()
        if caught_up(client.replication(topic), ends):
            return time.monotonic() - started
        if time.monotonic() - started > timeout_s:
            raise SystemExit(f"the topic {topic} was not replicated within {timeout_s:.0f} s")
        time.sleep(POLL_S)


def format_row(name: str, summary: Summary, goal: str) -> str:
    return (
        f"  {name:<34} {summary.p50:8.2f} {summary.p90:8.2f} {summary.p99:8.2f} "
        f"{summary.max:8.2f}  {goal}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--journals", type=int, default=100)
    parser.add_argument("--events", type=int, default=10, help="events per journal")
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds over every journal")
    parser.add_argument("--partitions", type=int, default=8, help="of the fresh topic")
    parser.add_argument(
        "--keep-replicator",
        action="store_true",
        help="leave the replicator running while reads are timed",
    )
    parser.add_argument(
        "--replication-timeout", type=float, default=600, help="seconds to wait for replication"
    )
    args = parser.parse_args()
    if min(args.journals, args.events, args.rounds, args.partitions) < 1:
        parser.error("--journals, --events, --rounds and --partitions must be at least 1")

    endpoints = Platform(DevConfig.from_env()).up(with_services=False)
    bootstrap = endpoints.kafka_bootstrap
    print("bench.small_reads")
    print(f"host: {host_line()}; Kafka, Cassandra, the services and this process share its")
    print(f"  cores; load average at the start: {load_average()}")
    with ExitStack() as stack:
        session, cassandra = stack.enter_context(bench_keyspace(endpoints))
        run(args, stack, session, cassandra, bootstrap, endpoints.spark_kafka_jars)
    print(f"load average at the end: {load_average()}")


def run(
    args: argparse.Namespace,
    stack: ExitStack,
    session: Any,
    cassandra: CassandraSettings,
    bootstrap: str,
    spark_jars: Path,
) -> None:
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-small-reads-")))
    topic = stack.enter_context(bench_topic(bootstrap, partitions=args.partitions))
    traced = tracing_env("default")
    reader_settings = {
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": cassandra.contact_points[0],
        "KJOURNAL_CASSANDRA__PORT": str(cassandra.port),
        "KJOURNAL_CASSANDRA__KEYSPACE": cassandra.keyspace,
        **traced,
    }
    link, _ = stack.enter_context(writers_reader(bootstrap, folder, reader_settings))
    reader_url = link["KJOURNAL_READER__URL"]
    writer_env = {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap, **link, **traced}
    writer_url, _ = stack.enter_context(service_process("kjournal_writer", writer_env, folder))
    target = ReplicatorTarget(
        bootstrap,
        cassandra.contact_points[0],
        cassandra.port,
        cassandra.keyspace,
        topic,
        spark_jars,
    )
    running = stack.enter_context(replicator(target, folder / "replicator", traced))
    print(
        f"parameters: {args.journals} journals × {args.events} events (one append each), topic "
        f"{topic} ({args.partitions} partitions), keyspace {cassandra.keyspace}, "
        f"{args.rounds} timed rounds after one warm-up round, one keep-alive httpx client"
    )
    client = stack.enter_context(Client(writer_url, reader_url, timeout=60))
    keys = [Key(topic, f"small-{i:05d}") for i in range(args.journals)]
    events = [
        Event(SeqNr(n), payload=JsonPayload({**PAYLOAD, "n": n})) for n in range(1, args.events + 1)
    ]
    ends: dict[int, int] = {}
    partitions: dict[Key, int] = {}
    started = time.monotonic()
    for key in keys:
        position = client.append(key, events).partition_offset
        ends[position.partition] = max(ends.get(position.partition, 0), position.offset + 1)
        partitions[key] = position.partition
    appended = time.monotonic() - started
    waited = wait_replicated(client, topic, ends, running.check_alive, args.replication_timeout)
    print(
        f"appended in {appended:.1f} s; the reader's replication status showed the topic "
        f"replicated {waited:.1f} s later (the replicator's start included)"
    )
    if not args.keep_replicator:
        code = running.stop()
        print(f"replicator stopped (exit {code}) before the reads are timed")

    statement = session.prepare(select_cql(TableNames(keyspace=cassandra.keyspace)))
    segments = segments_of(args.events, cassandra.segment_size)
    http = stack.enter_context(httpx.Client(base_url=reader_url, timeout=60))
    kafka = stack.enter_context(EndOffsetAsker(bootstrap))
    pointers: list[float] = []
    reads: list[float] = []
    selects: list[float] = []
    healths: list[float] = []
    end_asks: list[float] = []
    for round_index in range(args.rounds + 1):
        timed = round_index > 0
        for key in keys:
            path = f"/v1/journals/{key.topic}/{key.id}"
            before = time.perf_counter()
            response = http.get(f"{path}/pointer")
            pointer_ms = (time.perf_counter() - before) * 1000
            if response.status_code != 200 or response.json().get("seqNr") != args.events:
                raise SystemExit(f"pointer of {key.id}: {response.status_code} {response.text}")
            before = time.perf_counter()
            response = http.get(f"{path}/events")
            read_ms = (time.perf_counter() - before) * 1000
            lines = response.content.count(b"\n")
            if response.status_code != 200 or lines != args.events:
                raise SystemExit(f"events of {key.id}: {response.status_code}, {lines} lines")
            before = time.perf_counter()
            rows = 0
            for segment in segments:
                rows += len(
                    list(session.execute(statement, (key.id, key.topic, segment, 1, args.events)))
                )
            select_ms = (time.perf_counter() - before) * 1000
            if rows != args.events:
                raise SystemExit(f"SELECT of {key.id}: {rows} rows")
            before = time.perf_counter()
            response = http.get("/healthz")
            health_ms = (time.perf_counter() - before) * 1000
            if response.status_code != 200:
                raise SystemExit(f"/healthz: {response.status_code} {response.text}")
            end_ms = kafka.time_end(topic, partitions[key])
            if timed:
                pointers.append(pointer_ms)
                reads.append(read_ms)
                selects.append(select_ms)
                healths.append(health_ms)
                end_asks.append(end_ms)

    pointer, read, select = summarize(pointers), summarize(reads), summarize(selects)
    print(
        f"milliseconds, {pointer.count} calls each ({args.journals} journals × "
        f"{args.rounds} rounds), replicator {'running' if args.keep_replicator else 'stopped'}:"
    )
    print(f"  {'':<34} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}  goal (issue 40)")
    print(format_row("GET pointer", pointer, f"p99 < {POINTER_P99_GOAL_MS:g} ms"))
    print(format_row(f"GET events ({args.events} events)", read, f"p99 < {READ_P99_GOAL_MS:g} ms"))
    print(format_row("raw SELECT of the rows (driver)", select, "the baseline"))
    health, end = summarize(healths), summarize(end_asks)
    print(format_row("GET /healthz (no work)", health, "the HTTP stack"))
    print(format_row("partition end from Kafka (aiokafka)", end, "a floor of the pointer"))
    print(
        f"  the pointer over /healthz + the partition end: p50 "
        f"{pointer.p50 - health.p50 - end.p50:+.2f}, p99 {pointer.p99 - health.p99 - end.p99:+.2f} "
        f"(p99s added overstate the pair's p99)"
    )
    print(
        f"  over the SELECT: pointer p50 {pointer.p50 / select.p50:.1f}×, p99 "
        f"{pointer.p99 / select.p99:.1f}×; events p50 {read.p50 / select.p50:.1f}×, p99 "
        f"{read.p99 / select.p99:.1f}×"
    )


class EndOffsetAsker:
    """An aiokafka consumer on an event loop of its own, asked one partition's end at a time, as
    the reader asks it before a read (a ListOffsets request, nothing fetched)."""

    def __init__(self, bootstrap: str) -> None:
        self._bootstrap = bootstrap
        self._loop = asyncio.new_event_loop()

    def __enter__(self) -> EndOffsetAsker:
        self._consumer = self._loop.run_until_complete(self._started())
        return self

    async def _started(self) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(bootstrap_servers=self._bootstrap, enable_auto_commit=False)
        await consumer.start()
        return consumer

    def __exit__(self, *exc_info: object) -> None:
        self._loop.run_until_complete(self._consumer.stop())
        self._loop.close()

    def time_end(self, topic: str, partition: int) -> float:
        """Milliseconds one end-offset request took."""
        wanted = TopicPartition(topic, partition)
        before = time.perf_counter()
        self._loop.run_until_complete(self._consumer.end_offsets([wanted]))
        return (time.perf_counter() - before) * 1000


if __name__ == "__main__":
    main()
