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
head reads, journal rows, heads, pointer2 update.

`--processes N` spreads the journals over N partitions, each replicated by its own process (as
the Spark job's Python workers do, one per core in local[N]); the clock runs from the moment all
of them start until the last one is done. Besides events/s, each line gives the CPU seconds of
the replicator processes and, when the node is kjournal-dev's, of the Cassandra node itself (its
JIT compiler included: the first runs after a node starts are slower). Asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import random
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import cassandra
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.metrics import RecordingMetrics
from kjournal.metrics.catalogue import REPLICATOR_EVENTS
from kjournal.metrics.catalogue import REPLICATOR_SLICE_SECONDS
from kjournal.model import ActionRecord
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.replicate import replicate_partition
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.state import PlatformState
from kjournal_replicator import worker_gc
from kjournal_replicator.settings import ApplySettings

from bench._host import cpu_model

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


def records_of(
    workload: Workload, per_append: int, seed: int, partition: int = 0, partitions: int = 1
) -> list[ConsumedRecord]:
    """The partition's records: its journals' appends, interleaved at random."""
    appends: list[tuple[Key, int, int]] = []  # key, first seqNr, last seqNr
    for j in range(partition, workload.journals, partitions):
        key = Key(TOPIC, f"bench-{j}")
        for first in range(1, workload.events_per_journal + 1, per_append):
            appends.append((key, first, min(first + per_append - 1, workload.events_per_journal)))
    if workload.journals > partitions:
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
        parts = encode_action(ActionRecord(action, PartitionOffset(partition, offset)).action)
        records.append(
            ConsumedRecord(
                TOPIC, partition, offset, parts.key, parts.value, parts.headers, parts.timestamp_ms
            )
        )
    return records


def slices(records: Sequence[ConsumedRecord], size: int) -> Iterator[Sequence[ConsumedRecord]]:
    for start in range(0, len(records), size):
        yield records[start : start + size]


@dataclass(frozen=True)
class PartitionRun:
    """What one replicating process measured."""

    records: int
    events: int
    started: float  # time.monotonic(), comparable across processes
    finished: float
    cpu: float
    slice_seconds: tuple[float, ...]


def replicate_one_partition(
    settings: CassandraSettings,
    keyspace: str,
    workload: Workload,
    args: argparse.Namespace,
    partition: int,
    start: Callable[[], object] = lambda: None,
) -> PartitionRun:
    """Build the partition's records, wait for `start`, then replicate them slice by slice."""
    records = records_of(
        workload, args.events_per_append, args.seed + partition, partition, args.processes
    )
    session = connect(settings)
    try:
        store = CassandraReplicatedStore(
            session,
            TableNames(keyspace=keyspace),
            segment_size=args.segment_size,
            concurrency=args.concurrency,
        )
        metrics = RecordingMetrics()
        worker_gc.tune(args.gc_threshold)  # as the replicator's workers do
        start()
        cpu_started, started = time.process_time(), time.monotonic()
        for n, slice_ in enumerate(slices(records, args.slice)):
            replicate_partition(
                TOPIC, partition, slice_, store, T0 + timedelta(seconds=n), metrics=metrics
            )
        finished = time.monotonic()
        cpu = time.process_time() - cpu_started
    finally:
        session.cluster.shutdown()
    written = int(metrics.counter(REPLICATOR_EVENTS.name, topic=TOPIC))
    slice_times = metrics.observations(REPLICATOR_SLICE_SECONDS.name, topic=TOPIC)
    return PartitionRun(len(records), written, started, finished, cpu, tuple(slice_times))


def _in_child(
    settings: CassandraSettings,
    keyspace: str,
    workload: Workload,
    args: argparse.Namespace,
    partition: int,
    barrier: Any,
    results: Any,
) -> None:
    results.put(
        replicate_one_partition(settings, keyspace, workload, args, partition, barrier.wait)
    )


def run(
    settings: CassandraSettings, keyspace: str, workload: Workload, args: argparse.Namespace
) -> None:
    node = cassandra_pid()
    node_cpu = process_cpu(node)
    if args.processes == 1:
        runs = [replicate_one_partition(settings, keyspace, workload, args, 0)]
    else:
        context = multiprocessing.get_context("spawn")  # the driver's threads do not survive fork
        barrier, results = context.Barrier(args.processes), context.Queue()
        children = [
            context.Process(
                target=_in_child,
                args=(settings, keyspace, workload, args, partition, barrier, results),
            )
            for partition in range(args.processes)
        ]
        for child in children:
            child.start()
        runs = [results.get(timeout=600) for _ in children]
        for child in children:
            child.join()
    node_cpu = process_cpu(node) - node_cpu
    took = max(r.finished for r in runs) - min(r.started for r in runs)
    events = workload.journals * workload.events_per_journal
    written = sum(r.events for r in runs)
    assert written == events, (written, events)
    records = sum(r.records for r in runs)
    slice_times = sorted(t for r in runs for t in r.slice_seconds)
    median = slice_times[len(slice_times) // 2]
    cpu = sum(r.cpu for r in runs)
    busy = sum(1 for r in runs if r.records)  # one journal cannot be split over partitions
    node_part = "" if node is None else f"; Cassandra node CPU {node_cpu:.2f} s"
    print(
        f"{workload.name}: {records:,} records in {len(slice_times)} slices"
        f"{f' over {busy} partitions' if busy > 1 else ''}, {took:.2f} s → "
        f"{events / took:,.0f} events/s, {records / took:,.0f} records/s; slice median "
        f"{median * 1000:.0f} ms; replicator CPU {cpu:.2f} s ({cpu / took / busy:.0%} "
        f"of {busy} core{'s' if busy > 1 else ''}){node_part}; "
        f"host load average {os.getloadavg()[0]:.1f}"
    )


def cassandra_pid() -> int | None:
    """The process id of kjournal-dev's Cassandra node, if that is the node in use."""
    state = PlatformState.load(DevConfig.from_env().state_file)
    component = None if state is None else state.components.get("cassandra")
    return None if component is None else component.pid


def process_cpu(pid: int | None) -> float:
    """User + system CPU seconds of a process so far (0 if unknown)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    parser.add_argument("--processes", type=int, default=1, help="partitions replicated at once")
    parser.add_argument("--keep", action="store_true", help="keep the keyspace afterwards")
    parser.add_argument(
        "--gc-threshold",
        type=int,
        default=ApplySettings().gc_threshold,
        help="first-generation GC threshold, as KJOURNAL_APPLY__GC_THRESHOLD (0: Python's)",
    )
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
            f"{args.concurrency} statements in flight per process, {args.processes} "
            f"replicating process{'es' if args.processes > 1 else ''}, "
            f"segment size {args.segment_size}, GC threshold {args.gc_threshold or 700}, "
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
            migrate(session, CassandraSettings(keyspace=keyspace))
            run(settings, keyspace, workloads[name], args)
    finally:
        if not args.keep:
            for keyspace in keyspaces:
                session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
        session.cluster.shutdown()


if __name__ == "__main__":
    main()
