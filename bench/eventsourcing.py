"""An `eventsourcing` application on kjournal against the same application on the library's
SQLite module (docs/eventsourcing.md).

    uv run python -m bench.eventsourcing [--aggregates 200] [--events 10] [--rounds 3]

Needs kjournal-dev's Kafka and Cassandra (`scripts/dev up`; KJOURNAL_DEV_KAFKA_PORT, default
9092). Starts its own reader and a writer linked to it (tracing at the Helm chart's default
sampler), on a fresh topic of one partition (an application topic), and alternates `--rounds`
times, in one thread as an application calls it:

* **kjournal**: `PERSISTENCE_MODULE=kjournal_eventsourcing`, over HTTP to those services;
* **SQLite**: `PERSISTENCE_MODULE=eventsourcing.sqlite` on a database file in a temporary folder
  (the baseline: the library's own module, in process, no network);

each saving `--aggregates` new aggregates of `--events` events (`app.save()`: one append of
`--events` events for kjournal, one transaction for SQLite) and getting each back
(`app.repository.get()`: one read). Prints saves/s and gets/s with their latency percentiles per
backend (medians over the rounds), and kjournal's ratios to SQLite. No assertion is made; there
is no pass mark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from bench._http import bench_topic, host, percentile, service_process, writers_reader
from bench._tracing import tracing_env


class Counter(Aggregate):
    @event("Started")
    def __init__(self) -> None:
        self.count = 0

    @event("Incremented")
    def increment(self) -> None:
        self.count += 1


class Counters(Application[UUID]):
    pass


@dataclass
class Round:
    saves: list[float]  # seconds each
    gets: list[float]
    saves_per_s: float
    gets_per_s: float


def one_round(env: dict[str, str], aggregates: int, events: int) -> Round:
    saves: list[float] = []
    gets: list[float] = []
    ids: list[UUID] = []
    with Counters(env=env) as app:
        started = time.perf_counter()
        for _ in range(aggregates):
            counter = Counter()
            for _ in range(events - 1):
                counter.increment()
            before = time.perf_counter()
            app.save(counter)
            saves.append(time.perf_counter() - before)
            ids.append(counter.id)
        saving = time.perf_counter() - started
        started = time.perf_counter()
        for aggregate_id in ids:
            before = time.perf_counter()
            got: Counter = app.repository.get(aggregate_id)
            gets.append(time.perf_counter() - before)
            assert got.version == events, (got.version, events)
        getting = time.perf_counter() - started
    return Round(saves, gets, aggregates / saving, aggregates / getting)


def describe(name: str, rounds: list[Round]) -> tuple[float, float]:
    saves_per_s = statistics.median(r.saves_per_s for r in rounds)
    gets_per_s = statistics.median(r.gets_per_s for r in rounds)
    saves = [s * 1000 for r in rounds for s in r.saves]
    gets = [g * 1000 for r in rounds for g in r.gets]
    print(
        f"  {name:<9} save {saves_per_s:8,.0f}/s  p50 {percentile(saves, 0.5):7.2f} ms  "
        f"p99 {percentile(saves, 0.99):7.2f} ms   get {gets_per_s:8,.0f}/s  "
        f"p50 {percentile(gets, 0.5):7.2f} ms  p99 {percentile(gets, 0.99):7.2f} ms"
    )
    return saves_per_s, gets_per_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aggregates", type=int, default=200, help="new aggregates per round")
    parser.add_argument("--events", type=int, default=10, help="events per aggregate")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bootstrap = f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}"
    print(f"host: {host()}")
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-es-")))
        topic = stack.enter_context(bench_topic(bootstrap, partitions=1))
        traced = tracing_env("default")
        link, _ = stack.enter_context(writers_reader(bootstrap, logs, traced))
        writer_env = {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap, **link, **traced}
        writer, _ = stack.enter_context(service_process("kjournal_writer", writer_env, logs))
        backends: dict[str, Callable[[int], dict[str, str]]] = {
            "kjournal": lambda _: {
                "PERSISTENCE_MODULE": "kjournal_eventsourcing",
                "KJOURNAL_WRITER_URL": writer,
                "KJOURNAL_READER_URL": link["KJOURNAL_READER__URL"],
                "KJOURNAL_TOPIC": topic,
            },
            "SQLite": lambda n: {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": str(logs / f"round{n}.db"),
            },
        }
        print(
            f"{args.rounds} rounds of {args.aggregates} new aggregates of {args.events} events "
            f"each, saved then got back, one thread; kjournal on topic {topic} (1 partition)"
        )
        results: dict[str, list[Round]] = {name: [] for name in backends}
        for n in range(args.rounds):
            for name, env in backends.items():
                results[name].append(one_round(env(n), args.aggregates, args.events))
                last = results[name][-1]
                print(
                    f"  round {n + 1} {name:<9} save {last.saves_per_s:8,.0f}/s   "
                    f"get {last.gets_per_s:8,.0f}/s"
                )
        print("medians over the rounds (latency percentiles over every call):")
        kjournal = describe("kjournal", results["kjournal"])
        sqlite = describe("SQLite", results["SQLite"])
        print(
            f"  kjournal/SQLite: save {kjournal[0] / sqlite[0]:.3f}, get {kjournal[1] / sqlite[1]:.3f} "
            "(SQLite in process on a local file, kjournal over HTTP to Kafka and Cassandra)"
        )
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"host load average at the end: {load}")


if __name__ == "__main__":
    main()
