"""Replication on Spark, end to end: `uv run python -m bench.replication_spark [--quick]`.

Runs `python -m kjournal_replicator` (local[2]) against the Kafka and Cassandra of `scripts/dev up`
(started if needed, without the services) on a fresh topic and keyspace, then measures:

1. catch-up: JOURNALS journals × EVENTS events are appended while no replicator runs (a replicator
   that was offline); then the replicator starts with at most a tenth of the backlog's records
   per micro-batch. Events per second from the end of its first micro-batch (every partition's
   pointer2 set: start-up excluded) to pointer2 covering every partition's end;
2. sustained throughput: ROUNDS times, as many events again (new journals each round),
   appended through the Journal API as fast as possible while the replicator runs; events per
   second from the first append to pointer2 covering every partition's end. The appender shares
   the two cores with the replicator, Kafka and Cassandra. Round 1 starts right after the
   replicator did, while its JVM still compiles; the figure reported as sustained is the median
   of the later rounds;
3. latency: appends at a steady RATE events/s for SECONDS; for each, the time from the broker's
   acknowledgement until pointer2 of its partition covers its offset (rows are written before
   pointer2 moves, so that is when a read from Cassandra alone sees it). pointer2 of every
   partition is read in one query every POLL_S, which bounds the resolution. (Catch-up and
   throughput rounds poll every THROUGHPUT_POLL_S: frequent polls cost the node CPU the replicator needs.)

Events are appended PER_APPEND at a time (default 10: a command's events, appended as one atomic
batch). With `--per-append 1` every event is a Kafka record of its own, so per-record costs (the
broker, the Spark Kafka source, handing rows to Python, decoding) dominate on both sides, and on
two cores the appender itself then cannot append much faster than ~12 000 records/s.

With `--tracing off,on` (or `off,default`), phase 2 runs once per mode, in that order, each
with a replicator of its own (resuming from the same checkpoint): `off` with
OTEL_SDK_DISABLED=true, `on` with every span sampled and exported to the local collector,
`default` sampled as the chart samples by default; this process's appends are traced the same
way, so their records carry trace context for the replicator to link (bench/_tracing.py). The
latency phase is then skipped. Prints each mode's sustained figure and their ratio.

Prints parameters, host and figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from bisect import bisect_left
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.telemetry import configure_tracing
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.lifecycle import Platform
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from bench._host import cpu_model
from bench._host import load_average
from bench._http import free_port
from bench._replicator import ReplicatorTarget
from bench._replicator import replicator_env
from bench._tracing import label as tracing_label
from bench._tracing import modes as tracing_modes
from bench._tracing import tracing_env

PARTITIONS = 8
POLL_S = 0.02
# Waiting for a backlog to be replicated polls less often: each poll costs the node ~8 ms of CPU
# at these rates (its request threads spin after every wake-up), and at POLL_S that was a fifth
# of a core taken from the replicator being measured. The error it adds is below THROUGHPUT_POLL_S.
THROUGHPUT_POLL_S = 0.1
PAYLOAD: dict[str, JsonValue] = {
    "type": "FundsDeposited",
    "amount": 12_500,
    "currency": "EUR",
    "by": "cashier-7",
}


@dataclass(frozen=True)
class Parameters:
    journals: int
    events: int  # per journal
    per_append: int
    rate: int  # events per second in the latency phase
    seconds: float
    master: str
    trigger_s: float
    concurrency: int  # appends in flight in the throughput phase
    rounds: int  # of the throughput phase
    spark_conf: str  # JSON, KJOURNAL_SPARK__CONF of the replicator
    tracing: list[str] = field(default_factory=list)  # modes of the throughput phase


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class PointerPoller:
    """Samples pointer2 of every partition every POLL_S on a thread: [(time, offsets)]."""

    def __init__(self, session: Session, keyspace: str, topic: str) -> None:
        self._statement = session.prepare(
            f"SELECT partition, offset FROM {keyspace}.pointer2 WHERE topic = ? AND partition IN ?"
        )
        self._session = session
        self._topic = topic
        self.samples: list[tuple[float, list[int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def read(self) -> list[int]:
        offsets = [-1] * PARTITIONS
        rows = self._session.execute(self._statement, (self._topic, list(range(PARTITIONS))))
        for partition, offset in rows:
            offsets[partition] = int(offset)
        return offsets

    def _run(self) -> None:
        while not self._stop.is_set():
            offsets = self.read()
            self.samples.append((time.monotonic(), offsets))
            self._stop.wait(POLL_S)

    def start(self) -> PointerPoller:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def visible_at(self, partition: int, offset: int, after: float) -> float | None:
        """The first sample at or after `after` whose pointer2 covers the offset."""
        times = [t for t, _ in self.samples]
        for i in range(bisect_left(times, after), len(self.samples)):
            if self.samples[i][1][partition] >= offset:
                return self.samples[i][0]
        return None


def start_replicator(
    endpoints: Endpoints,
    keyspace: str,
    topic: str,
    folder: Path,
    params: Parameters,
    *,
    max_offsets_per_trigger: int | None = None,
    tracing: str | None = None,
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KJOURNAL_")}
    if tracing is not None:
        env.update(tracing_env(tracing))
    target = ReplicatorTarget.on(endpoints, keyspace, topic)
    env.update(replicator_env(target, folder, free_port(), params.master))
    env.update(
        {
            "KJOURNAL_SPARK__TRIGGER_INTERVAL_S": str(params.trigger_s),
            "KJOURNAL_SPARK__CONF": params.spark_conf,
        }
    )
    if max_offsets_per_trigger is not None:
        env["KJOURNAL_SPARK__MAX_OFFSETS_PER_TRIGGER"] = str(max_offsets_per_trigger)
    log = (folder / "replicator.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "kjournal_replicator"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(replicator: subprocess.Popen[bytes]) -> int:
    replicator.send_signal(signal.SIGTERM)
    try:
        return replicator.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(replicator.pid, signal.SIGKILL)
        return replicator.wait()


def events(first: int, count: int) -> list[Event]:
    return [
        Event(SeqNr(seq), payload=JsonPayload({**PAYLOAD, "seq": seq}))
        for seq in range(first, first + count)
    ]


def wait_covered(poller: PointerPoller, ends: dict[int, int], timeout: float) -> float:
    """Time at which pointer2 covered every offset below `ends` (partition → end offset)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        offsets = poller.read()
        if all(offsets[p] >= end - 1 for p, end in ends.items() if end > 0):
            return time.monotonic()
        time.sleep(THROUGHPUT_POLL_S)
    raise TimeoutError("replication did not catch up in time")


async def append_all(
    journals: Journals, topic: str, prefix: str, params: Parameters
) -> dict[int, int]:
    """JOURNALS × EVENTS events, as fast as possible; the end offset of each partition."""
    ends: dict[int, int] = {}
    semaphore = asyncio.Semaphore(params.concurrency)

    async def one(index: int) -> None:
        journal = journals.journal(Key(topic, f"{prefix}-{index}"))
        for first in range(1, params.events + 1, params.per_append):
            async with semaphore:
                result = await journal.produce(events(first, params.per_append))
            position = result.partition_offset
            ends[position.partition] = max(ends.get(position.partition, 0), position.offset + 1)

    await asyncio.gather(*(one(i) for i in range(params.journals)))
    return ends


def catch_up(poller: PointerPoller, ends: dict[int, int], per_record: int, per_batch: int) -> None:
    """Wait for the first micro-batch, then time the rest of the backlog."""
    deadline = time.monotonic() + 600
    while True:
        offsets = poller.read()
        if all(offsets[p] >= 0 for p, end in ends.items() if end > 0):
            break
        if time.monotonic() > deadline:
            raise TimeoutError("the replicator did not start in time")
        time.sleep(THROUGHPUT_POLL_S)
    first_batch_done = time.monotonic()
    covered = sum(o + 1 for o in offsets)
    done = wait_covered(poller, ends, 600)
    total = sum(ends.values())
    rest = (total - covered) * per_record
    print(
        f"catch-up: {total * per_record:,} events waiting; after the first micro-batch "
        f"({covered * per_record:,} events, start-up included), the other {rest:,} in "
        f"{done - first_batch_done:.1f} s: {rest / (done - first_batch_done):,.0f} events/s "
        f"(at most {per_batch:,} records per micro-batch; pointer2 polled every "
        f"{THROUGHPUT_POLL_S * 1000:.0f} ms)"
    )


async def throughput(
    journals: Journals,
    topic: str,
    params: Parameters,
    poller: PointerPoller,
    round_: int,
    mode: str = "",
) -> float:
    """One round; returns events/s from the first append to everything replicated."""
    total = params.journals * params.events
    started = time.monotonic()
    ends = await append_all(journals, topic, f"bench-{mode}r{round_}", params)
    produced = time.monotonic()
    at_last_append = poller.read()
    done = await asyncio.to_thread(wait_covered, poller, ends, 600)
    # Records replicated after the last append: the replicator then has the cores to itself.
    rest = sum(end - 1 - at_last_append[p] for p, end in ends.items())
    rest_events = rest * params.per_append
    print(
        f"round {round_}: {total:,} events in {total // params.per_append:,} records; appended in "
        f"{produced - started:.1f} s ({total / (produced - started):,.0f} events/s); replicated "
        f"{done - started:.1f} s after the first append, {done - produced:.1f} s after the last: "
        f"{total / (done - started):,.0f} events/s (pointer2 polled every "
        f"{THROUGHPUT_POLL_S * 1000:.0f} ms); after the last append, with the cores to itself: "
        f"{rest_events:,} events in {done - produced:.1f} s, "
        f"{rest_events / max(done - produced, 1e-9):,.0f} events/s"
    )
    return total / (done - started)


async def latency(
    journals: Journals, topic: str, params: Parameters, poller: PointerPoller
) -> None:
    acked: list[tuple[float, int, int]] = []  # (ack time, partition, offset)
    tick = 0.01
    per_tick = params.rate * tick / params.per_append
    seq: dict[int, int] = {}
    pending: set[asyncio.Task[None]] = set()

    async def append(index: int) -> None:
        first = seq.get(index, 0) + 1
        seq[index] = first + params.per_append - 1
        result = await journals.journal(Key(topic, f"steady-{index}")).produce(
            events(first, params.per_append)
        )
        position = result.partition_offset
        acked.append((time.monotonic(), position.partition, position.offset))

    started = time.monotonic()
    budget = 0.0
    n = 0
    while time.monotonic() - started < params.seconds:
        budget += per_tick
        while budget >= 1:
            budget -= 1
            # One append in flight per journal at a time: seqNrs stay in order.
            task = asyncio.create_task(append(n % params.journals))
            pending.add(task)
            task.add_done_callback(pending.discard)
            n += 1
        await asyncio.sleep(
            max(0.0, started + (n * params.per_append / params.rate) - time.monotonic())
        )
    await asyncio.gather(*pending)
    sent = time.monotonic() - started
    ends: dict[int, int] = {}
    for _, partition, offset in acked:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    await asyncio.to_thread(wait_covered, poller, ends, 120)
    await asyncio.sleep(2 * POLL_S)
    latencies = []
    for ack, partition, offset in acked:
        visible = poller.visible_at(partition, offset, ack)
        if visible is not None:
            latencies.append(visible - ack)
    print(
        f"latency at {len(acked) * params.per_append / sent:,.0f} events/s for {sent:.0f} s "
        f"({len(acked):,} appends): p50 {percentile(latencies, 0.5):.3f} s, "
        f"p99 {percentile(latencies, 0.99):.3f} s, max {max(latencies):.3f} s "
        f"(pointer2 polled every {POLL_S * 1000:.0f} ms)"
    )


async def fresh_keyspace_and_topic(endpoints: Endpoints, session: Session) -> tuple[str, str]:
    """A migrated keyspace and a topic of PARTITIONS of the bench's own (the caller drops and
    deletes them)."""
    keyspace = f"kjbench_{uuid.uuid4().hex[:10]}"
    # Outside the default topic pattern (journal.*): a running dev replicator must not take it.
    topic = f"kjbench_{uuid.uuid4().hex[:10]}"
    migrate(session, CassandraSettings(keyspace=keyspace))
    await create_topic(endpoints.kafka_bootstrap, topic, PARTITIONS)
    return keyspace, topic


async def run(endpoints: Endpoints, session: Session, params: Parameters) -> None:
    keyspace, topic = await fresh_keyspace_and_topic(endpoints, session)
    folder = Path(tempfile.mkdtemp(prefix="kjournal-bench-"))
    poller = PointerPoller(session, keyspace, topic)
    kafka = KafkaSettings(bootstrap_servers=endpoints.kafka_bootstrap)
    replicator: subprocess.Popen[bytes] | None = None
    try:
        async with Journals(kafka) as journals:
            ends = await append_all(journals, topic, "backlog", params)
            per_batch = max(sum(ends.values()) // 10, 100)
            replicator = start_replicator(
                endpoints, keyspace, topic, folder, params, max_offsets_per_trigger=per_batch
            )
            await asyncio.to_thread(catch_up, poller, ends, params.per_append, per_batch)
            stop(replicator)
            replicator = None
            sustained: dict[str, float] = {}
            phases: list[str | None] = [*params.tracing] or [None]
            for mode in phases:
                if mode in ("default", "on"):
                    # Where this process's spans go, sampled as the replicator's are.
                    os.environ.update(tracing_env(mode))
                    configure_tracing("kjournal-bench-appender")
                # Resumes from the first one's checkpoint, with the default micro-batch size.
                replicator = start_replicator(
                    endpoints, keyspace, topic, folder, params, tracing=mode
                )
                # Warm-up: Spark and the Python workers start, connect and import once.
                warm_started = time.monotonic()
                result = await journals.journal(Key(topic, f"warm-up-{mode}")).produce(events(1, 1))
                position = result.partition_offset
                await asyncio.to_thread(
                    wait_covered, poller, {position.partition: position.offset + 1}, 300
                )
                label = f" (tracing {mode})" if mode else ""
                print(
                    f"warm-up{label}: replicator start + first append replicated in "
                    f"{time.monotonic() - warm_started:.1f} s"
                )
                rates = [
                    await throughput(journals, topic, params, poller, round_, mode or "")
                    for round_ in range(1, params.rounds + 1)
                ]
                if len(rates) > 1:
                    sustained[mode or ""] = statistics.median(rates[1:])
                    print(
                        f"sustained throughput{label} (median of rounds 2-{params.rounds}): "
                        f"{statistics.median(rates[1:]):,.0f} events/s; round 1 (JVM just "
                        f"started): {rates[0]:,.0f} events/s"
                    )
                if mode is not None:
                    stop(replicator)
                    replicator = None
            traced = next((m for m in ("default", "on") if m in sustained), None)
            if traced is not None and "off" in sustained:
                on, off = sustained[traced], sustained["off"]
                print(
                    f"tracing: sustained {tracing_label(traced)} {on:,.0f} events/s, off "
                    f"{off:,.0f} events/s, {traced}/off {on / off:.3f} "
                    f"({(1 - on / off) * 100:+.1f} % throughput lost)"
                )
            if params.seconds > 0 and replicator is not None:
                poller.start()
                await latency(journals, topic, params, poller)
    finally:
        poller.stop()
        code = None if replicator is None else stop(replicator)
        print(
            f"replicator exited with {code}; load average after: "
            f"{load_average()}; log: {folder / 'replicator.log'}"
        )
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")
        await delete_topics(endpoints.kafka_bootstrap, [topic])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the work")
    parser.add_argument("--per-append", type=int, default=10, help="events per append")
    parser.add_argument("--trigger", type=float, default=0.2, help="trigger interval, seconds")
    parser.add_argument("--rounds", type=int, default=4, help="throughput rounds")
    parser.add_argument(
        "--latency-s", type=float, default=60, help="length of the latency phase (0: skip it)"
    )
    parser.add_argument(
        "--spark-conf", default="{}", help="extra Spark conf of the replicator, JSON"
    )
    parser.add_argument(
        "--tracing",
        default="",
        help="off,on or off,default: the throughput phase once per tracing mode",
    )
    args = parser.parse_args()
    modes = tracing_modes(args.tracing) if args.tracing else []
    if modes and modes not in (["off", "on"], ["off", "default"]):
        parser.error(
            "--tracing takes off,on or off,default (this process cannot stop tracing once it "
            "starts, nor change its sampler)"
        )
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    try:
        if not isinstance(json.loads(args.spark_conf), dict):
            raise ValueError("not an object")
    except ValueError as exc:
        parser.error(f"--spark-conf must be a JSON object of Spark conf keys: {exc}")
    scale = 10 if args.quick else 1
    params = Parameters(
        journals=1000 // scale,
        events=100,
        per_append=args.per_append,
        rate=1000,
        seconds=0 if modes else args.latency_s / scale,
        master="local[2]",
        trigger_s=args.trigger,
        concurrency=500,
        rounds=args.rounds,
        spark_conf=args.spark_conf,
        tracing=modes,
    )
    # Kafka and Cassandra only: the bench starts the one replicator it measures.
    endpoints = Platform(DevConfig.from_env()).up(with_services=False)
    print("bench.replication_spark: Kafka → Spark (PySpark Structured Streaming) → Cassandra")
    print(
        f"parameters: {params.journals:,} journals × {params.events} events, {params.per_append} "
        f"per append, {PARTITIONS} partitions, {params.concurrency} appends in flight, "
        f"{params.rounds} throughput rounds; steady "
        f"{params.rate:,} events/s for {params.seconds:.0f} s; master {params.master}, trigger "
        f"{params.trigger_s} s; JSON payloads ~{len(str(PAYLOAD))} B"
    )
    print(
        f"host: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}; "
        "Kafka, Cassandra, the replicator and this load generator share the host; "
        f"load average before: {load_average()}"
    )
    session = connect(
        CassandraSettings(contact_points=(endpoints.cassandra_host,), port=endpoints.cassandra_port)
    )
    try:
        asyncio.run(run(endpoints, session, params))
    finally:
        session.cluster.shutdown()


if __name__ == "__main__":
    main()
