"""Read throughput over HTTP (the reader service) against the in-process `Journal.read`.

    uv run python -m bench.http_read [--events 20000] [--payload-bytes 1024] [--rounds 3]

Needs kjournal-dev's Kafka and Cassandra (KJOURNAL_DEV_KAFKA_PORT, KJOURNAL_DEV_CASSANDRA_PORT,
KJOURNAL_DEV_KEYSPACE). Appends one journal of N events (batches of 500, text payloads) to a
throw-away topic, starts a reader process on a free port, then times, alternating, each round:

(a) in-process: `Journals(..., eventual=CassandraEventualReader).journal(key).read()`;
(b) HTTP raw: the reader's NDJSON stream, lines counted but not parsed (the server's cost);
(c) HTTP client: `kjournal.client.Client.read`, every line parsed into an EventRecord.

No replicator runs, so all three read the unreplicated Kafka tail (tail cache or scan). Prints
events/s and MB/s (of NDJSON for b and c) per mode, medians over the rounds, and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.session import open_session
from kjournal.cassandra.settings import CassandraSettings
from kjournal.client import Client
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model import TextPayload

from bench._http import bench_topic
from bench._http import host
from bench._http import service

BATCH = 500


async def append_journal(kafka: KafkaSettings, key: Key, events: int, size: int) -> None:
    async with Journals(kafka) as journals:
        journal = journals.journal(key)
        for first in range(1, events + 1, BATCH):
            last = min(events, first + BATCH - 1)
            batch = [
                Event(SeqNr(n), payload=TextPayload(os.urandom(size // 2).hex()))
                for n in range(first, last + 1)
            ]
            await journal.produce(batch)


async def in_process_rounds(
    kafka: KafkaSettings, cassandra: CassandraSettings, key: Key, rounds: int
) -> list[float]:
    """Seconds per full read, in one process that stays open (as a service would)."""
    times = []
    async with open_session(cassandra) as session:
        eventual = await CassandraEventualReader.create(session, cassandra.names)
        async with Journals(kafka, eventual=eventual) as journals:
            journal = journals.journal(key)
            async for _ in journal.read(limit=10):  # warm-up: tail cache, consumers
                pass
            for _ in range(rounds):
                started = time.perf_counter()
                count = 0
                async for _ in journal.read():
                    count += 1
                times.append(time.perf_counter() - started)
    return times


def http_raw(url: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    count = size = 0
    with httpx.Client(timeout=300) as http, http.stream("GET", url) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
            count += chunk.count(b"\n")
    return time.perf_counter() - started, count, size


def http_client(reader_url: str, key: Key) -> tuple[float, int]:
    started = time.perf_counter()
    with Client(reader_url=reader_url, timeout=300) as client:
        count = sum(1 for _ in client.read(key))
    return time.perf_counter() - started, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--payload-bytes", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bootstrap = f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}"
    cassandra_port = int(os.environ.get("KJOURNAL_DEV_CASSANDRA_PORT", "9042"))
    keyspace = os.environ.get("KJOURNAL_DEV_KEYSPACE", "journal")
    kafka = KafkaSettings(bootstrap_servers=bootstrap, linger_ms=5)
    cassandra = CassandraSettings(
        contact_points=("127.0.0.1",), port=cassandra_port, keyspace=keyspace
    )

    print("bench.http_read")
    print(f"host        {host()}")
    print(
        f"parameters  {args.events} events of ~{args.payload_bytes} B text, batches of {BATCH}, "
        f"{args.rounds} rounds, Kafka {bootstrap}, Cassandra 127.0.0.1:{cassandra_port}/{keyspace}"
    )
    logs = Path(tempfile.mkdtemp(prefix="kjournal-bench-"))
    with bench_topic(bootstrap) as topic:
        key = Key(topic, "bench-read")
        started = time.perf_counter()
        asyncio.run(append_journal(kafka, key, args.events, args.payload_bytes))
        print(f"appended    in {time.perf_counter() - started:.1f} s (not replicated: Kafka tail)")
        settings = {
            "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
            "KJOURNAL_CASSANDRA__PORT": str(cassandra_port),
            "KJOURNAL_CASSANDRA__KEYSPACE": keyspace,
        }
        with service("kjournal_reader", settings, logs) as url:
            events_url = f"{url}/v1/journals/{topic}/bench-read/events"
            httpx.get(events_url, params={"limit": 10}, timeout=60)  # warm-up
            raw, parsed, local = [], [], []
            size = 0
            for _ in range(args.rounds):
                local.extend(asyncio.run(in_process_rounds(kafka, cassandra, key, 1)))
                seconds, count, size = http_raw(events_url)
                assert count == args.events, count
                raw.append(seconds)
                seconds, count = http_client(url, key)
                assert count == args.events, count
                parsed.append(seconds)

    mb = size / 1e6
    rows = [
        ("in-process Journal.read", statistics.median(local), None),
        ("HTTP, NDJSON not parsed", statistics.median(raw), mb),
        ("HTTP, kjournal.client", statistics.median(parsed), mb),
    ]
    base = rows[0][1]
    print(f"{'mode':<26}  {'events/s':>10}  {'MB/s':>7}  {'vs in-process':>13}")
    for name, seconds, megabytes in rows:
        rate = f"{megabytes / seconds:7.1f}" if megabytes else f"{'-':>7}"
        print(f"{name:<26}  {args.events / seconds:>10,.0f}  {rate}  {base / seconds:13.2f}")
    print(f"NDJSON      {mb:.1f} MB per read")


if __name__ == "__main__":
    main()
