"""Apply throughput of replicate_partition into the real Cassandra node.

    uv run python -m bench.replicate_apply [--scenario both] [--slice 5000] [--concurrency 32]

Two workloads, each replicated slice by slice (a slice = one Kafka poll or Spark micro-batch of
one partition) into a throw-away keyspace on the local node (kjournal-dev's Cassandra, port from
KJOURNAL_DEV_CASSANDRA_PORT):

* one:  1 journal × 100 000 events, appends of --events-per-append events;
* many: 10 000 journals × 10 events, appends of --events-per-append events, the journals'
  records interleaved at random across the partition;
* custom: --journals × --events, interleaved the same way (e.g. the shape of one partition's
  slice in the Spark bench: --journals 125 --events 100 --events-per-append 1 --slice 2500).

Kafka records are built (encoded) before the clock starts; the timed part is everything the
replicator does per slice: pointer2, header and payload decoding, folding, quarantine check,
head reads, journal rows, heads, pointer2 update. Prints parameters, host and figures; asserts
nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import cassandra
from kjournal.cassandra.schema import SchemaSettings, migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.tables import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.metrics import RecordingMetrics
from kjournal.model import ActionRecord, Event, Events, JsonPayload, Key, PartitionOffset, SeqNr
from kjournal.replicate import replicate_partition
from kjournal.settings import CassandraSettings
from kjournal.wire.record import ConsumedRecord, append_action, encode_action

TOPIC = "journal"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Workload:
    name: str
    journals: int
    events_per_journal: int


WORKLOADS = {
    "one": Workload("1 journal × 100 000 events", 1, 100_000),
    "many": Workload("10 000 journals × 10 events", 10_000, 10),
}


def payload(n: int) -> JsonPayload:
    return JsonPayload(
        {"type": "ItemAdded", "cart": "c-42", "item": {"sku": f"sku-{n}", "qty": n % 7}}
    )


def records_of(workload: Workload, per_append: int, seed: int) -> list[ConsumedRecord]:
    """The partition's records: every journal's appends, interleaved at random."""
    appends: list[tuple[Key, int, int]] = []  # key, first seqNr, last seqNr
    for j in range(workload.journals):
        key = Key(TOPIC, f"bench-{j}")
        for first in range(1, workload.events_per_journal + 1, per_append):
            appends.append((key, first, min(first + per_append - 1, workload.events_per_journal)))
    if workload.journals > 1:
        order = random.Random(seed)
        # Shuffle while keeping each journal's appends in seqNr order.
        slots = sorted(range(len(appends)), key=lambda _: order.random())
        by_key: dict[Key, Iterator[tuple[Key, int, int]]] = {}
        grouped: dict[Key, list[tuple[Key, int, int]]] = {}
        for append in appends:
            grouped.setdefault(append[0], []).append(append)
        by_key = {key: iter(items) for key, items in grouped.items()}
        appends = [next(by_key[appends[slot][0]]) for slot in slots]
    records = []
    for offset, (key, first, last) in enumerate(appends):
        events = Events(
            tuple(Event(SeqNr(n), frozenset(), payload(n)) for n in range(first, last + 1))
        )
        action = append_action(
            key, T0 + timedelta(milliseconds=offset), events, origin="bench", version="bench"
        )
        parts = encode_action(ActionRecord(action, PartitionOffset(0, offset)).action)
        records.append(
            ConsumedRecord(
                TOPIC, 0, offset, parts.key, parts.value, parts.headers, parts.timestamp_ms
            )
        )
    return records


def slices(records: Sequence[ConsumedRecord], size: int) -> Iterator[Sequence[ConsumedRecord]]:
    for start in range(0, len(records), size):
        yield records[start : start + size]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(store: CassandraReplicatedStore, workload: Workload, args: argparse.Namespace) -> None:
    records = records_of(workload, args.events_per_append, args.seed)
    events = workload.journals * workload.events_per_journal
    metrics = RecordingMetrics()
    cpu_started, started = time.process_time(), time.perf_counter()
    for n, slice_ in enumerate(slices(records, args.slice)):
        replicate_partition(
            TOPIC,
            0,
            slice_,
            store,
            T0 + timedelta(seconds=n),
            metrics=metrics,
        )
    took = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    written = metrics.counter("kjournal_replicator_events_total", topic=TOPIC)
    assert written == events, (written, events)
    slice_times = sorted(metrics.observations("kjournal_replicator_slice_seconds", topic=TOPIC))
    median = slice_times[len(slice_times) // 2]
    load = os.getloadavg()[0]
    print(
        f"{workload.name}: {len(records):,} records in {len(slice_times)} slices, "
        f"{took:.2f} s → {events / took:,.0f} events/s, {len(records) / took:,.0f} records/s; "
        f"slice median {median * 1000:.0f} ms; replicator CPU {cpu:.2f} s ({cpu / took:.0%} of "
        f"one core); host load average {load:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=("one", "many", "both", "custom"), default="both")
    parser.add_argument("--journals", type=int, default=1000, help="custom scenario")
    parser.add_argument("--events", type=int, default=100, help="custom: events per journal")
    parser.add_argument("--slice", type=int, default=5000, help="records per slice")
    parser.add_argument("--events-per-append", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64, help="statements in flight")
    parser.add_argument("--segment-size", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the keyspace afterwards")
    args = parser.parse_args()

    settings = CassandraSettings(port=int(os.environ.get("KJOURNAL_DEV_CASSANDRA_PORT", "9042")))
    session = connect(settings)
    keyspaces: list[str] = []
    try:
        print(
            f"host: {cpu_model()}, {os.cpu_count()} cores (shared with the Cassandra node), "
            f"Python {platform.python_version()}, cassandra-driver {cassandra.__version__}"
        )
        print(
            f"parameters: slice {args.slice} records, {args.events_per_append} events per append, "
            f"{args.concurrency} statements in flight, segment size {args.segment_size}, "
            f"write consistency {settings.write_consistency.value}, JSON payloads"
        )
        workloads = dict(WORKLOADS)
        workloads["custom"] = Workload(
            f"{args.journals:,} journals × {args.events:,} events".replace(",", " "),
            args.journals,
            args.events,
        )
        names = ["one", "many"] if args.scenario == "both" else [args.scenario]
        for name in names:
            keyspace = f"kjrepl_bench_{uuid.uuid4().hex[:10]}"
            keyspaces.append(keyspace)
            migrate(session, SchemaSettings(keyspace=keyspace))
            store = CassandraReplicatedStore(
                session,
                TableNames(keyspace=keyspace),
                segment_size=args.segment_size,
                concurrency=args.concurrency,
            )
            run(store, workloads[name], args)
    finally:
        if not args.keep:
            for keyspace in keyspaces:
                session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
        session.cluster.shutdown()


if __name__ == "__main__":
    main()
