"""The reader's fold (docs/concurrency.md, "The fold"): how fast it consumes a partition backlog,
and its CPU per record, beside a raw consumer that decodes the same records.

    uv run python -m bench.fold [--journals 2000] [--appends 50] [--events 1] [--rounds 3]

Needs kjournal-dev's Kafka and Cassandra (`scripts/dev up`). Fills a fresh topic of 8 partitions
with journals × appends records (`--events` events each, produced as they are, no writer) and
creates a fresh keyspace with no pointer2 for it, so that a reader's fold starts at offset 0;
then alternates `--rounds` times:

* **fold**: a new reader process on that keyspace; one question (the outcome of the last record
  of each partition) starts its fold and waits until it has consumed and decided every record:
  records/s from the question to the answers, and the reader's CPU per record over that time
  (the journals' starts from Cassandra included: every journal is new to it);
* **raw**: one aiokafka consumer in this process reading the partitions from their beginning
  and decoding each record's header and events with kjournal.wire (what the fold must do at
  least: the replicator quarantines a record whose header or payload does not decode).

Prints both and their ratio, the host and its load. The fold's CPU per record is what the
sharding arithmetic of docs/concurrency.md starts from. No assertion is made.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Platform

from bench._host import load_average
from bench._http import bench_keyspace
from bench._http import bench_topic
from bench._http import cpu_seconds
from bench._http import host
from bench._http import service_process
from bench.feed import PARTITIONS
from bench.feed import fill as fill_topic
from bench.feed import raw_catch_up


async def _ends(reader: str, topic: str) -> dict[int, int]:
    """Each partition's end offset, from the reader's replication status."""
    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.get(f"{reader}/v1/topics/{topic}/replication")
        response.raise_for_status()
        return {p["partition"]: p["endOffset"] for p in response.json()["partitions"]}


async def _last_records(bootstrap: str, topic: str, ends: dict[int, int]) -> dict[int, str]:
    """The journal id of each partition's last record."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        found: dict[int, str] = {}
        for partition, end in ends.items():
            if end == 0:
                continue
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek(tp, end - 1)
            batch = await consumer.getone()
            assert batch.key is not None
            found[partition] = batch.key.decode()
        return found
    finally:
        await consumer.stop()


async def _fold_once(reader: str, topic: str, last: dict[int, str], ends: dict[int, int]) -> None:
    """Ask the outcome of each partition's last record: answered once the fold decided it."""
    async with httpx.AsyncClient(timeout=600) as http:
        body = {"appends": [{"id": id_, "offset": ends[p] - 1} for p, id_ in last.items()]}
        response = await http.post(f"{reader}/v1/topics/{topic}/outcomes", json=body)
        response.raise_for_status()
        lines = [line for line in response.text.splitlines() if line]
        if len(lines) != len(last) or any('"outcome"' not in line for line in lines):
            raise SystemExit(f"bench.fold: the reader answered {response.text[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--journals", type=int, default=2000)
    parser.add_argument("--appends", type=int, default=50, help="records per journal")
    parser.add_argument("--events", type=int, default=1, help="events per record")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    endpoints = Platform(DevConfig.from_env()).up(with_services=False)
    bootstrap = endpoints.kafka_bootstrap
    print("bench.fold")
    print(f"host        {host()}")
    with ExitStack() as stack:
        keyspace = stack.enter_context(bench_keyspace(endpoints))[1].keyspace
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-fold-")))
        topic = stack.enter_context(bench_topic(bootstrap, PARTITIONS))
        events = asyncio.run(fill_topic(bootstrap, topic, args.journals, args.appends, args.events))
        records = args.journals * args.appends
        print(
            f"backlog     {records:,} records ({events:,} events) of {args.journals:,} "
            f"journals in {PARTITIONS} partitions; keyspace {keyspace} (no pointer2: the "
            "fold starts at 0); reader tracing off"
        )
        settings = {
            "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
            "KJOURNAL_CASSANDRA__CONTACT_POINTS": endpoints.cassandra_host,
            "KJOURNAL_CASSANDRA__PORT": str(endpoints.cassandra_port),
            "KJOURNAL_CASSANDRA__KEYSPACE": keyspace,
            "OTEL_SDK_DISABLED": "true",
        }
        fold_rates: list[float] = []
        fold_cpu: list[float] = []
        raw_rates: list[float] = []
        for round_ in range(args.rounds):
            with service_process("kjournal_reader", settings, logs / f"r{round_}") as (
                url,
                pid,
            ):
                ends = asyncio.run(_ends(url, topic))
                last = asyncio.run(_last_records(bootstrap, topic, ends))
                before, started = cpu_seconds(pid), time.perf_counter()
                asyncio.run(_fold_once(url, topic, last, ends))
                seconds = time.perf_counter() - started
                used = cpu_seconds(pid) - before
            fold_rates.append(records / seconds)
            fold_cpu.append(used / records)
            read, raw_seconds = asyncio.run(raw_catch_up(bootstrap, topic, decode=True))
            raw_rates.append(read / raw_seconds)
            print(
                f"round {round_ + 1}     fold {records / seconds:10,.0f} records/s, reader CPU "
                f"{used / records * 1e6:6.1f} µs/record   raw decoding consumer "
                f"{read / raw_seconds:10,.0f} records/s",
                flush=True,
            )
        fold, raw_rate = statistics.median(fold_rates), statistics.median(raw_rates)
        cpu = statistics.median(fold_cpu)
        print(
            f"medians     fold {fold:,.0f} records/s ({cpu * 1e6:.1f} µs of reader CPU per "
            f"record: one core folds {1 / cpu:,.0f} records/s); raw decoding consumer "
            f"{raw_rate:,.0f} records/s; fold/raw {fold / raw_rate:.2f}"
        )
    print(f"load        {load_average()} (after the run)")


if __name__ == "__main__":
    main()
