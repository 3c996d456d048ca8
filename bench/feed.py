"""The topic feed (docs/feed.md): catch-up throughput against a raw Kafka consumer, and the live
tail's latency.

    uv run python -m bench.feed [--journals 500] [--appends 20] [--per-append 10] [--rounds 3]
                                [--rate 1000] [--seconds 15] [--http-rate 50]

Needs kjournal-dev's Kafka and Cassandra (`scripts/dev up`; KJOURNAL_DEV_KAFKA_PORT, default 9092).
Starts its own reader process (and, for the last phase, a writer linked to it), tracing with the
Helm chart's default sampler, on a fresh topic of 8 partitions, then, in the same run:

1. **catch-up**: fills the topic with journals × appends records of `--per-append` events each
   (one append after the other per journal, all journals at once), reads it once through the
   feed (the reader's first catch-up of the topic, which also starts its folds; printed apart),
   then alternates `--rounds` times: the feed from the start as NDJSON
   (`GET /v1/topics/{topic}/events`, each line parsed) until its `end` line, and one
   AIOKafkaConsumer reading the same partitions from their beginning to their end offsets
   (records fetched, nothing decoded: the floor any consumer pays), and the same consumer
   decoding each record into its events with kjournal.wire (what a projection reading Kafka
   itself must do at least, before any append rule, delete or purge). Prints events/s of each
   and the feed's ratios to both (goal: ≥ 0.5 of the decoding consumer's).
2. **live tail at `--rate` appends/s**: a client follows the feed from the end (`Accept:
   text/event-stream`, `AsyncClient.follow`) while this process produces one-event appends to
   100 journals at the rate, for `--seconds`; latency is from the broker's acknowledgement of an
   append (`Journal.produce` returning) to its event's arrival at the follower. Goal: p99 <
   250 ms. The writer service is not in this loop: on the 2-core dev box one writer and reader
   answer about 100 appends/s (each 201 waits for the append's outcome, docs/concurrency.md).
3. **live tail from the writer's 201** at `--http-rate` appends/s through a writer process: the
   latency from the 201 to the event's arrival (it can be negative: the follower may see the
   event before the writer's answer reaches this process).

No assertion is made; figures and their baseline are printed in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Coroutine
from contextlib import ExitStack
from contextlib import aclosing
from pathlib import Path
from typing import Any
from typing import TypeVar

import httpx
import orjson
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from kjournal.client import AsyncClient
from kjournal.journal import Journals
from kjournal.kafka.records import consumed_record
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Append
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.read import event_records
from kjournal.wire.record import decode_action_record

from bench._host import load_average
from bench._http import bench_topic
from bench._http import cpu_seconds
from bench._http import dev_reader_settings
from bench._http import host
from bench._http import percentile
from bench._http import run
from bench._http import service_process
from bench._tracing import tracing_env

T = TypeVar("T")

PARTITIONS = 8
LIVE_JOURNALS = 100
PHASE_LIMIT_S = 300.0


def bounded(phase: str, coroutine: Coroutine[Any, Any, T]) -> T:
    """`run(coroutine)`, or exit naming the phase that did not finish in PHASE_LIMIT_S."""

    async def limited() -> T:
        try:
            return await asyncio.wait_for(coroutine, PHASE_LIMIT_S)
        except TimeoutError:
            raise SystemExit(
                f"bench.feed: {phase} did not finish in {PHASE_LIMIT_S:.0f} s"
            ) from None

    return run(limited())


async def fill(bootstrap: str, topic: str, journals: int, appends: int, per_append: int) -> int:
    """journals × appends records of per_append events; returns the events written."""

    async def one(journal_store: Journals, n: int) -> None:
        journal = journal_store.journal(Key(topic, f"catch-up-{n}"))
        for a in range(appends):
            first = a * per_append + 1
            await journal.produce(
                [
                    Event(SeqNr(s), payload=JsonPayload({"n": s}))
                    for s in range(first, first + per_append)
                ]
            )

    async with Journals(KafkaSettings(bootstrap_servers=bootstrap)) as store:
        await asyncio.gather(*(one(store, n) for n in range(journals)))
    return journals * appends * per_append


async def feed_catch_up(reader: str, topic: str) -> tuple[int, float]:
    """Events delivered by the NDJSON catch-up from the start, and the seconds it took (from the
    request: the client is made before, as the raw consumer is started before its clock)."""
    events = 0
    async with httpx.AsyncClient(timeout=None) as http:
        started = time.perf_counter()
        async with http.stream("GET", f"{reader}/v1/topics/{topic}/events") as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line:
                    continue
                entry = orjson.loads(line)
                kind = entry.get("type")
                if kind == "event":
                    events += 1
                elif kind == "end":
                    break
                else:
                    raise SystemExit(f"unexpected feed line: {line[:200]}")
        return events, time.perf_counter() - started


def timed_catch_up(
    reader: str, reader_pid: int, topic: str, written: int
) -> tuple[float, float, float]:
    """One feed catch-up: events/s, and the reader's and this process's CPU µs per event."""
    reader_before, client_before = cpu_seconds(reader_pid), time.process_time()
    events, seconds = bounded("feed catch-up", feed_catch_up(reader, topic))
    reader_us = (cpu_seconds(reader_pid) - reader_before) / max(events, 1) * 1e6
    client_us = (time.process_time() - client_before) / max(events, 1) * 1e6
    if events != written:
        raise SystemExit(f"the feed delivered {events:,} events of {written:,}")
    return events / seconds, reader_us, client_us


async def raw_catch_up(bootstrap: str, topic: str, decode: bool = False) -> tuple[int, float]:
    """Records read by one consumer from the partitions' beginning to their end offsets; with
    `decode`, each record also decoded into its events (kjournal.wire, the Scala library's
    format), the least a projection consuming Kafka itself has to do."""
    # "earliest", not a seek after assign(): the assignment's own reset to the default "latest"
    # can land after the seek, and the consumer then waited at the end offsets for ever.
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        group_id=None,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        started = time.perf_counter()
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        ends = await consumer.end_offsets(partitions)
        left = {tp for tp in partitions if ends[tp] > 0}
        records = 0
        while left:
            batches = await consumer.getmany(timeout_ms=1000, max_records=10_000)
            for tp, batch in batches.items():
                taken = [record for record in batch if record.offset < ends[tp]]
                records += len(taken)
                if decode:
                    for record in taken:
                        decoded = decode_action_record(consumed_record(record))
                        if decoded is not None and isinstance(decoded.action, Append):
                            event_records(decoded.action, record.partition, record.offset)
                if batch and batch[-1].offset + 1 >= ends[tp]:
                    left.discard(tp)
        return records, time.perf_counter() - started
    finally:
        await consumer.stop()


class Arrivals:
    """When each (journal, seqNr) was delivered to the follower, on this process's clock."""

    def __init__(self) -> None:
        self.at: dict[tuple[str, int], float] = {}
        self.ready = asyncio.Event()
        self._arrived = asyncio.Event()

    async def follow(self, reader: str, topic: str) -> None:
        async with (
            AsyncClient(reader_url=reader) as client,
            aclosing(client.follow(topic, from_end=True, heartbeat_s=1.0)) as items,
        ):
            async for item in items:
                self.ready.set()  # the first heartbeat: the stream is open at the end
                if item.type == "event" and item.record is not None and item.id is not None:
                    self.at[(item.id, int(item.record.seq_nr))] = time.perf_counter()
                    self._arrived.set()

    async def wait_for(self, keys: Collection[tuple[str, int]], timeout_s: float) -> None:
        """Until every one of `keys` arrived, or `timeout_s` passed."""
        deadline = time.monotonic() + timeout_s
        while not set(keys) <= self.at.keys():
            self._arrived.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)


async def paced(
    rate: float, seconds: float, send: Callable[[str, int], Awaitable[None]], prefix: str
) -> int:
    """`send(journal, seqNr)` at `rate` a second over LIVE_JOURNALS journals, each journal's
    appends one after the other (a journal whose last append is still in flight is skipped for
    that tick's slot and takes the next free one)."""
    queues: list[asyncio.Queue[int | None]] = [asyncio.Queue() for _ in range(LIVE_JOURNALS)]

    async def worker(n: int) -> None:
        seq = 0
        while await queues[n].get() is not None:
            seq += 1
            await send(f"{prefix}{n}", seq)

    workers = [asyncio.create_task(worker(n)) for n in range(LIVE_JOURNALS)]
    total = int(rate * seconds)
    started = time.perf_counter()
    for i in range(total):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        queues[i % LIVE_JOURNALS].put_nowait(i)
    for queue in queues:
        queue.put_nowait(None)
    await asyncio.gather(*workers)
    return total


async def live_tail(
    reader: str,
    topic: str,
    rate: float,
    seconds: float,
    append: Callable[[str, int], Awaitable[None]],
    measured_from: str,
    journals: str,
) -> None:
    """Follow the feed from its end while `append(journal, seqNr)` runs at `rate` over the
    journals named `journals` + n; report the latency from each append's return to its event's
    arrival."""
    arrivals = Arrivals()
    following = asyncio.create_task(arrivals.follow(reader, topic))
    await asyncio.wait_for(arrivals.ready.wait(), 30)
    sent: dict[tuple[str, int], float] = {}

    async def timed(journal: str, seq: int) -> None:
        await append(journal, seq)
        sent[(journal, seq)] = time.perf_counter()

    began = time.perf_counter()
    total = await paced(rate, seconds, timed, journals)
    took = time.perf_counter() - began
    await _report(
        f"live tail, {total} appends at {total / took:,.0f}/s (asked {rate:,.0f}/s), "
        f"{measured_from} → follower",
        sent,
        arrivals,
        following,
    )


def _event(seq: int) -> list[Event]:
    return [Event(SeqNr(seq), payload=JsonPayload({"n": seq}))]


async def warm_up(reader: str, topic: str) -> None:
    async with AsyncClient(reader_url=reader) as client:
        await client.pointer(Key(topic, "catch-up-0"))


async def live_from_ack(
    bootstrap: str, reader: str, topic: str, rate: float, seconds: float
) -> None:
    async with Journals(KafkaSettings(bootstrap_servers=bootstrap)) as store:

        async def produce(journal: str, seq: int) -> None:
            await store.journal(Key(topic, journal)).produce(_event(seq))

        await live_tail(reader, topic, rate, seconds, produce, "broker ack", "live-ack-")


async def live_from_201(writer: str, reader: str, topic: str, rate: float, seconds: float) -> None:
    async with AsyncClient(writer_url=writer) as client:

        async def append(journal: str, seq: int) -> None:
            await client.append(Key(topic, journal), _event(seq))

        # Journals of its own: the first phase's appends again would be replays, never delivered.
        await live_tail(
            reader, topic, rate, seconds, append, "writer's 201 over HTTP", "live-http-"
        )


async def _report(
    title: str,
    sent: dict[tuple[str, int], float],
    arrivals: Arrivals,
    following: asyncio.Task[None],
) -> None:
    await arrivals.wait_for(sent.keys(), 30)
    following.cancel()
    await asyncio.gather(following, return_exceptions=True)
    latencies = [(arrivals.at[k] - t) * 1000 for k, t in sent.items() if k in arrivals.at]
    missing = len(sent) - len(latencies)
    print(
        f"{title}: p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms, "
        f"max {max(latencies, default=float('nan')):.1f} ms (goal p99 < 250 ms)"
        + (f"; {missing} never delivered within 30 s" if missing else "")
    )
    if latencies:
        # p99 by fifth of the run, in the order sent: a start-up spike and a steady lag differ
        ordered = [
            (arrivals.at[k] - t) * 1000
            for k, t in sorted(sent.items(), key=lambda kv: kv[1])
            if k in arrivals.at
        ]
        fifth = max(1, len(ordered) // 5)
        parts = [ordered[i : i + fifth] for i in range(0, len(ordered), fifth)][:5]
        print(
            "  p99 by fifth of the run: "
            + ", ".join(f"{percentile(part, 0.99):.0f} ms" for part in parts)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--journals", type=int, default=500)
    parser.add_argument("--appends", type=int, default=20, help="appends per journal")
    parser.add_argument("--per-append", type=int, default=10, help="events per append")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=1000, help="live tail: appends/s produced")
    parser.add_argument("--seconds", type=float, default=15, help="live tail: how long")
    parser.add_argument("--http-rate", type=float, default=50, help="0: skip the HTTP phase")
    args = parser.parse_args()
    bootstrap = f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}"
    print("bench.feed")
    print(f"host        {host()}")
    logs = Path(tempfile.mkdtemp(prefix="kjournal-bench-"))
    with ExitStack() as stack:
        topic = stack.enter_context(bench_topic(bootstrap, PARTITIONS))
        reader, reader_pid = stack.enter_context(
            service_process(
                "kjournal_reader",
                {**dev_reader_settings(bootstrap), **tracing_env("default")},
                logs,
            )
        )
        written = bounded(
            "fill", fill(bootstrap, topic, args.journals, args.appends, args.per_append)
        )
        print(
            f"catch-up    {written:,} events in {args.journals * args.appends:,} records "
            f"({args.journals} journals × {args.appends} appends × {args.per_append} events), "
            f"{PARTITIONS} partitions; {args.rounds} alternating rounds"
        )
        # The reader's first catch-up of a topic it does not follow yet also builds the topic's
        # folds beside it (they fold every unreplicated record once); a reader serving a topic
        # has long followed it, so the rounds below are the figure and this one is printed apart.
        rate, reader_us, client_us = timed_catch_up(reader, reader_pid, topic, written)
        print(
            f"  first catch-up (the reader starts following the topic) {rate:,.0f} events/s; "
            f"CPU per event: reader {reader_us:.1f} µs, client {client_us:.1f} µs"
        )
        feed_rates, raw_rates, decoded_rates = [], [], []
        reader_cpu, client_cpu = [], []
        for _ in range(args.rounds):
            rate, reader_us, client_us = timed_catch_up(reader, reader_pid, topic, written)
            feed_rates.append(rate)
            reader_cpu.append(reader_us)
            client_cpu.append(client_us)
            records, seconds = bounded("raw catch-up", raw_catch_up(bootstrap, topic))
            raw_rates.append(records * args.per_append / seconds)
            records, seconds = bounded(
                "raw catch-up, decoded", raw_catch_up(bootstrap, topic, decode=True)
            )
            decoded_rates.append(records * args.per_append / seconds)
            print(
                f"  feed (NDJSON) {feed_rates[-1]:>10,.0f} events/s   raw consumer "
                f"{raw_rates[-1]:>10,.0f} events/s, decoding {decoded_rates[-1]:>9,.0f} "
                f"({records:,} records); feed CPU per event: reader "
                f"{reader_cpu[-1]:.1f} µs, client {client_cpu[-1]:.1f} µs"
            )
        feed, raw = statistics.median(feed_rates), statistics.median(raw_rates)
        decoded = statistics.median(decoded_rates)
        print(
            f"  medians: feed {feed:,.0f} events/s; raw {raw:,.0f} events/s, feed/raw "
            f"{feed / raw:.3f}; raw decoding {decoded:,.0f} events/s, feed/decoding "
            f"{feed / decoded:.3f} (goal ≥ 0.5, the rounds after the first catch-up)"
        )
        # A reader meeting a topic for the first time starts its tail cache and waits until it
        # has caught up with the topic's unreplicated records (docs/architecture.md, "tail cache"): the first journal
        # read does, before any live phase, as a reader serving the topic has long done.
        bounded("reader warm-up", warm_up(reader, topic))
        bounded(
            "live tail from the ack",
            live_from_ack(bootstrap, reader, topic, args.rate, args.seconds),
        )
        if args.http_rate > 0:
            writer, _ = stack.enter_context(
                service_process(
                    "kjournal_writer",
                    {
                        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
                        "KJOURNAL_READER__URL": reader,
                    },
                    logs,
                )
            )
            bounded(
                "live tail from the 201",
                live_from_201(writer, reader, topic, args.http_rate, args.seconds),
            )
    print(f"load        {load_average()} (after the run); logs {logs}")


if __name__ == "__main__":
    main()
