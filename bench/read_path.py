"""Read-path benchmark: Journal.read and pointer against real Kafka and Cassandra.

    uv run python -m bench.read_path [--events 10000] [--rss-events 1000000]

Figures (printed, never asserted):
1. a fully replicated journal read through Journal.read vs a raw cassandra-driver SELECT of the
   same rows in the same run (target ≥ 50k events/s in-process);
2. 1k and 10k unreplicated events in the Kafka tail, tail cache hit vs miss (scan);
3. pointer latency p50/p99 with a warm tail cache (target p99 < 10 ms);
4. peak RSS of a separate process reading a journal of --rss-events events (target < 200 MB).
Starts the local platform if it is not running (and leaves it running).

`--tracing off,default,on` then reads the fully replicated journal of (1) in fresh processes, one
per mode and round (`--rounds`, alternating): `off` with OTEL_SDK_DISABLED=true, `default` and
`on` with the services' tracing set up in process (the Helm chart's default sampler, or every
span sampled; exported to the local collector), and prints the median events/s of each and its
ratio to off.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import resource
import sys
import time
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from statistics import median

from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.read.settings import FoldSettings
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.lifecycle import Platform
from kjournal_dev.platform.replay import end_offsets
from kjournal_dev.platform.replay import replicate
from kjournal_dev.platform.topics import create_topic as create_topic_named

from bench._tracing import label as tracing_label
from bench._tracing import modes as tracing_modes
from bench._tracing import tracing_env

KEYSPACE = "bench_read"
PAYLOAD: JsonValue = {"kind": "order-line", "sku": "ABC-123", "qty": 3, "note": "x" * 60}


def host() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


async def create_topic(bootstrap: str, partitions: int = 1) -> str:
    name = f"journal_bench_{uuid.uuid4().hex[:8]}"
    await create_topic_named(bootstrap, name, partitions)
    return name


async def fill(
    journals: Journals, key: Key, events: int, first: int = 1, per_append: int = 100
) -> None:
    """One append after the other: appends of one journal produced at once may land out of
    order, and the append rule drops one that lands after higher seqNrs (docs/concurrency.md)."""
    journal = journals.journal(key)
    for start in range(first, first + events, per_append):
        batch = [
            Event(SeqNr(n), payload=JsonPayload(PAYLOAD))
            for n in range(start, min(start + per_append, first + events))
        ]
        await journal.produce(batch)


async def timed_read(journals: Journals, key: Key) -> tuple[int, float]:
    started = time.perf_counter()
    count = 0
    async for _ in journals.journal(key).read():
        count += 1
    return count, time.perf_counter() - started


def raw_select(session, keyspace: str, key: Key, segments: int) -> tuple[int, float]:
    statement = session.prepare(
        f"SELECT seq_nr, timestamp, partition, offset, tags, metadata, payload_type, payload_txt, "
        f"payload_bin, headers, origin, version FROM {keyspace}.journal "
        "WHERE id = ? AND topic = ? AND segment = ?"
    )
    started = time.perf_counter()
    count = 0
    for segment in range(segments):
        for _ in session.execute(statement, (key.id, key.topic, segment)):
            count += 1
    return count, time.perf_counter() - started


async def latencies(call: Callable[[], Awaitable[object]], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(args: argparse.Namespace, endpoints: Endpoints) -> None:
    print(f"host: {host()}")
    print(
        f"kafka {endpoints.kafka_bootstrap}, cassandra {endpoints.cassandra_host}:{endpoints.cassandra_port}"
    )
    session = connect(
        CassandraSettings(contact_points=(endpoints.cassandra_host,), port=endpoints.cassandra_port)
    )
    schema = CassandraSettings(keyspace=KEYSPACE)
    migrate(session, schema)
    store = CassandraReplicatedStore(session, schema.names)
    eventual = await CassandraEventualReader.create(session, schema.names)
    kafka = KafkaSettings(bootstrap_servers=endpoints.kafka_bootstrap)
    topic = await create_topic(endpoints.kafka_bootstrap)

    async with Journals(kafka) as writer:
        replicated = Key(topic, "replicated")
        await fill(writer, replicated, args.events)
        await replicate(endpoints.kafka_bootstrap, topic, 0, store)
        async with Journals(
            kafka,
            fold=FoldSettings(enabled=False),
            eventual=eventual,
        ) as reader:
            await timed_read(reader, replicated)  # warm up prepared statements and the pool
            count, seconds = await timed_read(reader, replicated)
            raw_count, raw_seconds = raw_select(
                session, KEYSPACE, replicated, 1 + args.events // 10_000
            )
        print(
            f"\n1. fully replicated journal of {args.events} events (baseline: raw driver SELECT, target ≥ 50k events/s)"
        )
        print(f"   Journal.read      {count / seconds:>10,.0f} events/s ({seconds:.3f} s)")
        print(
            f"   raw SELECT        {raw_count / raw_seconds:>10,.0f} rows/s ({raw_seconds:.3f} s)"
        )
        print(f"   ratio             {(count / seconds) / (raw_count / raw_seconds):.2f}")
        if args.tracing:
            await compare_tracing(args, topic, replicated.id)

        print("\n2. unreplicated tail (everything after pointer2 only in Kafka)")
        for size in (1_000, 10_000):
            key = Key(topic, f"head-{size}")
            await fill(writer, key, size)
            async with Journals(
                kafka,
                fold=FoldSettings(enabled=False),
                eventual=eventual,
            ) as miss:
                await timed_read(miss, key)
                count, seconds = await timed_read(miss, key)
            print(
                f"   {size:>6} events, tail cache off (scan)  {count / seconds:>10,.0f} events/s ({seconds * 1000:.1f} ms)"
            )
            async with Journals(
                kafka,
                fold=FoldSettings(payload_budget_bytes=256 << 20),
                eventual=eventual,
            ) as hit:
                await timed_read(hit, key)  # starts the topic's tail and waits until it caught up
                count, seconds = await timed_read(hit, key)
            print(
                f"   {size:>6} events, tail cache hit         {count / seconds:>10,.0f} events/s ({seconds * 1000:.1f} ms)"
            )

        print("\n3. pointer latency, warm tail cache (target p99 < 10 ms)")
        async with Journals(kafka, eventual=eventual) as reader:
            journal = reader.journal(Key(topic, "head-1000"))
            await journal.pointer()
            samples = await latencies(journal.pointer, 500)
        print(
            f"   p50 {pct(samples, 0.5):.2f} ms   p99 {pct(samples, 0.99):.2f} ms   ({len(samples)} calls)"
        )

        if args.rss_events:
            big = Key(topic, "rss")
            print(
                f"\n4. peak RSS reading a {args.rss_events:,}-event journal (three quarters replicated) in a fresh process (target < 200 MB)"
            )
            await fill(writer, big, args.rss_events, per_append=500)
            ends = await end_offsets(endpoints.kafka_bootstrap, topic, 1)
            # slices of ~20k events, as a replicator's micro-batches of 500-event records would be
            await replicate(
                endpoints.kafka_bootstrap,
                topic,
                0,
                store,
                until=ends[0] - (ends[0] // 4),
                slice_records=40,
            )
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.read_path",
                "--child-rss",
                topic,
                big.id,
                stdout=asyncio.subprocess.PIPE,
            )
            output, _ = await child.communicate()
            print("   " + output.decode().strip())
    session.cluster.shutdown()


async def compare_tracing(args: argparse.Namespace, topic: str, id: str) -> None:
    print(f"\n1b. the same read, tracing {args.tracing}, {args.rounds} alternating rounds")
    rates: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for mode in tracing_modes(args.tracing):
            env = {**os.environ, **tracing_env(mode)}
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.read_path", "--child-read", mode, topic, id,
                stdout=asyncio.subprocess.PIPE, env=env,
            )  # fmt: skip
            output, _ = await child.communicate()
            rate = float(output.decode().split()[-1])
            rates.setdefault(mode, []).append(rate)
            print(f"   {mode:<7} {rate:>10,.0f} events/s")
    for mode in rates:
        if mode == "off" or "off" not in rates:
            continue
        traced, off = median(rates[mode]), median(rates["off"])
        print(
            f"   tracing: {tracing_label(mode)} {traced:,.0f}/s, off {off:,.0f}/s (medians), "
            f"{mode}/off {traced / off:.3f} ({(1 - traced / off) * 100:+.1f} % throughput lost)"
        )


async def child_read(mode: str, topic: str, id: str, endpoints: Endpoints) -> None:
    """Read the journal a few times with tracing as `mode` says; print the best events/s."""
    if mode != "off":
        from kjournal.telemetry import configure_tracing

        assert configure_tracing("kjournal-bench-read") is not None
    session = connect(
        CassandraSettings(contact_points=(endpoints.cassandra_host,), port=endpoints.cassandra_port)
    )
    eventual = await CassandraEventualReader.create(session, TableNames(keyspace=KEYSPACE))
    kafka = KafkaSettings(bootstrap_servers=endpoints.kafka_bootstrap)
    # The start-up heap (the SDK and its exporter's modules with tracing) out of the collector's
    # sight, as the services freeze theirs (kjournal_service/app.py): otherwise every full
    # collection during a read walks it, and the comparison measures the heap, not tracing.
    gc.collect()
    gc.freeze()
    best = 0.0
    async with Journals(kafka, fold=FoldSettings(enabled=False), eventual=eventual) as reader:
        await timed_read(reader, Key(topic, id))
        for _ in range(5):
            count, seconds = await timed_read(reader, Key(topic, id))
            best = max(best, count / seconds)
    session.cluster.shutdown()
    print(f"events/s {best:.0f}")


async def child_rss(topic: str, id: str, endpoints: Endpoints) -> None:
    session = connect(
        CassandraSettings(contact_points=(endpoints.cassandra_host,), port=endpoints.cassandra_port)
    )
    eventual = await CassandraEventualReader.create(session, TableNames(keyspace=KEYSPACE))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kafka = KafkaSettings(bootstrap_servers=endpoints.kafka_bootstrap)
    async with Journals(
        kafka,
        fold=FoldSettings(enabled=False),
        eventual=eventual,
    ) as reader:
        count, seconds = await timed_read(reader, Key(topic, id))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"read {count:,} events in {seconds:.1f} s ({count / seconds:,.0f}/s); peak RSS {peak:.0f} MB (before reading {before:.0f} MB)"
    )
    session.cluster.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rss-events", type=int, default=1_000_000)
    parser.add_argument("--tracing", default="", help="e.g. off,on: compare read 1 by mode")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the tracing comparison")
    parser.add_argument("--child-rss", nargs=2, metavar=("TOPIC", "ID"), help=argparse.SUPPRESS)
    parser.add_argument("--child-read", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    running = Platform(DevConfig.from_env()).up()
    if arguments.child_read:
        mode, topic_name, journal_id = arguments.child_read
        asyncio.run(child_read(mode, topic_name, journal_id, running))
    elif arguments.child_rss:
        topic_name, journal_id = arguments.child_rss
        asyncio.run(child_rss(topic_name, journal_id, running))
    else:
        asyncio.run(main(arguments, running))
