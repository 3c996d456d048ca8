"""An `eventsourcing` application on kjournal against the same application on the library's
PostgreSQL and SQLite modules (docs/eventsourcing.md).

    uv run python -m bench.eventsourcing [--threads 1,8] [--aggregates 200] [--events 10]
        [--rounds 3]

Needs kjournal-dev's Kafka and Cassandra (`scripts/dev up`; KJOURNAL_DEV_KAFKA_PORT, default
9092) and Debian's PostgreSQL server (the `postgresql` package: /usr/lib/postgresql/<version>/bin,
or KJOURNAL_BENCH_PG_BIN). Starts its own reader and a writer linked to it (tracing at the Helm
chart's default sampler), on a fresh topic of one partition (an application topic), and its own
PostgreSQL server on a free loopback port with its data in a temporary folder (bench/_postgres.py;
run as the `postgres` user when this process is root; stopped and removed at the end). Then, for
each level of `--threads` and `--rounds` times, runs each backend once, one after the other (the
first backend moves on by one each round):

* **kjournal**: `PERSISTENCE_MODULE=kjournal_eventsourcing`, over HTTP to those services;
* **PostgreSQL**: `PERSISTENCE_MODULE=eventsourcing.postgres` on that server, over TCP (the
  library's defaults otherwise: its connection pool, fsync and synchronous commits on);
* **SQLite**: `PERSISTENCE_MODULE=eventsourcing.sqlite` on a database file in a temporary folder
  (in process, no network).

In a round, one application is shared by the level's threads, as a service's request threads
share it. Each thread first saves and gets one aggregate untimed (connections opened), then
saves `--aggregates` new aggregates of `--events` events of its own (`app.save()`: one append of
`--events` events for kjournal, one transaction for the others), and once every thread is done,
gets each of its own back (`app.repository.get()`: one read). saves/s and gets/s count every
thread's calls over the phase's wall time. Prints them per backend and level with latency
percentiles (medians over the rounds), kjournal's ratios to PostgreSQL and to SQLite beside the
issue's goal (at 8 threads kjournal saves ≥ 1× and gets ≥ 0.5× PostgreSQL's), the host and its
load average. No assertion is made; there is no pass mark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate
from eventsourcing.domain import event

from bench._host import host_line
from bench._host import load_average
from bench._http import bench_topic
from bench._http import percentile
from bench._http import service_process
from bench._http import writers_reader
from bench._postgres import postgres_server
from bench._postgres import run_as_prefix
from bench._postgres import server_version
from bench._tracing import tracing_env

GOAL_THREADS = 8
GOAL_SAVES = 1.0  # kjournal's saves/s over PostgreSQL's at GOAL_THREADS (issue 40)
GOAL_GETS = 0.5


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
    saves: list[float]  # seconds each, every thread's
    gets: list[float]
    saves_per_s: float
    gets_per_s: float


def parse_levels(text: str) -> list[int]:
    """`--threads 1,8` → [1, 8]: positive thread counts in the order given, each once."""
    levels: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            level = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a thread count: {part!r}") from None
        if level < 1:
            raise argparse.ArgumentTypeError(f"a thread count is at least 1, not {level}")
        if level not in levels:
            levels.append(level)
    if not levels:
        raise argparse.ArgumentTypeError("no thread count given")
    return levels


def backend_order(names: list[str], round_index: int) -> list[str]:
    """The backends of one round: the first moves on by one each round, so none is always first
    (or always right after the same other one) in a round."""
    shift = round_index % len(names)
    return names[shift:] + names[:shift]


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else float("nan")


def new_counter(events: int) -> Counter:
    counter = Counter()
    for _ in range(events - 1):
        counter.increment()
    return counter


def in_threads(threads: int, work: Callable[[int], None]) -> float:
    """Run work(0..threads-1) at once, one thread each; the wall time from the common start to
    the last one's end. An exception in a thread is raised here."""
    start = threading.Barrier(threads + 1)
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            start.wait()
            work(index)
        except BaseException as exc:
            failures.append(exc)

    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    start.wait()
    started = time.perf_counter()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise failures[0]
    return elapsed


def one_round(env: dict[str, str], threads: int, aggregates: int, events: int) -> Round:
    saves: list[list[float]] = [[] for _ in range(threads)]
    gets: list[list[float]] = [[] for _ in range(threads)]
    ids: list[list[UUID]] = [[] for _ in range(threads)]
    with Counters(env=env) as app:

        def warm_up(_: int) -> None:
            counter = new_counter(events)
            app.save(counter)
            app.repository.get(counter.id)

        def save(index: int) -> None:
            for _ in range(aggregates):
                counter = new_counter(events)
                before = time.perf_counter()
                app.save(counter)
                saves[index].append(time.perf_counter() - before)
                ids[index].append(counter.id)

        def get(index: int) -> None:
            for aggregate_id in ids[index]:
                before = time.perf_counter()
                got: Counter = app.repository.get(aggregate_id)
                gets[index].append(time.perf_counter() - before)
                assert got.version == events, (got.version, events)

        in_threads(threads, warm_up)
        saving = in_threads(threads, save)
        getting = in_threads(threads, get)
    calls = threads * aggregates
    return Round(
        [s for per_thread in saves for s in per_thread],
        [g for per_thread in gets for g in per_thread],
        calls / saving,
        calls / getting,
    )


def describe(name: str, rounds: list[Round]) -> tuple[float, float]:
    saves_per_s = statistics.median(r.saves_per_s for r in rounds)
    gets_per_s = statistics.median(r.gets_per_s for r in rounds)
    saves = [s * 1000 for r in rounds for s in r.saves]
    gets = [g * 1000 for r in rounds for g in r.gets]
    print(
        f"  {name:<10} save {saves_per_s:8,.0f}/s  p50 {percentile(saves, 0.5):7.2f} ms  "
        f"p99 {percentile(saves, 0.99):7.2f} ms   get {gets_per_s:8,.0f}/s  "
        f"p50 {percentile(gets, 0.5):7.2f} ms  p99 {percentile(gets, 0.99):7.2f} ms"
    )
    return saves_per_s, gets_per_s


def plural(threads: int) -> str:
    return f"{threads} thread{'' if threads == 1 else 's'}"


def goal_note(threads: int, what: str) -> str:
    goal = GOAL_SAVES if what == "save" else GOAL_GETS
    return f" (goal at {GOAL_THREADS} threads: ≥ {goal:g})" if threads == GOAL_THREADS else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--threads",
        type=parse_levels,
        default=parse_levels(f"1,{GOAL_THREADS}"),
        help=f"thread counts, comma-separated (default 1,{GOAL_THREADS})",
    )
    parser.add_argument(
        "--aggregates", type=int, default=200, help="new aggregates per thread and round"
    )
    parser.add_argument("--events", type=int, default=10, help="events per aggregate")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.aggregates < 1 or args.events < 1 or args.rounds < 1:
        parser.error("--aggregates, --events and --rounds must be at least 1")
    levels: list[int] = args.threads
    bootstrap = f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}"
    print("bench.eventsourcing")
    print(f"host: {host_line()}; Kafka, Cassandra, the services, PostgreSQL and this process")
    print(f"  share its cores; load average at the start: {load_average()}")
    with ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-es-")))
        postgres = stack.enter_context(postgres_server())
        run_as = run_as_prefix(os.geteuid())
        print(
            f"PostgreSQL {server_version(postgres)} on {postgres.host}:{postgres.port}, data in "
            f"{postgres.folder}, run as {run_as[2] if run_as else 'this user'}"
        )
        topic = stack.enter_context(bench_topic(bootstrap, partitions=1))
        traced = tracing_env("default")
        link, _ = stack.enter_context(writers_reader(bootstrap, logs, traced))
        writer_env = {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap, **link, **traced}
        writer, _ = stack.enter_context(service_process("kjournal_writer", writer_env, logs))
        backends: dict[str, Callable[[str], dict[str, str]]] = {
            "kjournal": lambda _: {
                "PERSISTENCE_MODULE": "kjournal_eventsourcing",
                "KJOURNAL_WRITER_URL": writer,
                "KJOURNAL_READER_URL": link["KJOURNAL_READER__URL"],
                "KJOURNAL_TOPIC": topic,
            },
            "PostgreSQL": lambda _: postgres.eventsourcing_env(),
            "SQLite": lambda run: {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": str(logs / f"{run}.db"),
            },
        }
        names = list(backends)
        print(
            f"{args.rounds} rounds per level of threads × {args.aggregates} new aggregates of "
            f"{args.events} events each, saved then got back; kjournal on topic {topic} "
            f"(1 partition)"
        )
        summary: dict[int, dict[str, tuple[float, float]]] = {}
        for threads in levels:
            print(f"{plural(threads)}:")
            results: dict[str, list[Round]] = {name: [] for name in names}
            for n in range(args.rounds):
                for name in backend_order(names, n):
                    env = backends[name](f"t{threads}-round{n}")
                    results[name].append(one_round(env, threads, args.aggregates, args.events))
                    last = results[name][-1]
                    print(
                        f"  round {n + 1} {name:<10} save {last.saves_per_s:8,.0f}/s   "
                        f"get {last.gets_per_s:8,.0f}/s"
                    )
            print(f"  medians over the rounds at {plural(threads)} (latency over every call):")
            summary[threads] = {name: describe(name, results[name]) for name in names}
            kjournal = summary[threads]["kjournal"]
            for baseline in ("PostgreSQL", "SQLite"):
                base = summary[threads][baseline]
                print(
                    f"  kjournal/{baseline}: save {ratio(kjournal[0], base[0]):.3f}"
                    f"{goal_note(threads, 'save') if baseline == 'PostgreSQL' else ''}, "
                    f"get {ratio(kjournal[1], base[1]):.3f}"
                    f"{goal_note(threads, 'get') if baseline == 'PostgreSQL' else ''}"
                )
        print("summary (saves/s and gets/s, medians over the rounds; kjournal's ratios):")
        print(
            f"  {'threads':>7}  {'kjournal':>17}  {'PostgreSQL':>17}  {'SQLite':>17}  "
            f"{'÷ PostgreSQL':>13}  {'÷ SQLite':>13}"
        )
        for threads, figures in summary.items():
            cells = "  ".join(
                f"{figures[name][0]:>8,.0f} {figures[name][1]:>8,.0f}" for name in names
            )
            kj, pg, sq = figures["kjournal"], figures["PostgreSQL"], figures["SQLite"]
            print(
                f"  {threads:>7}  {cells}  {ratio(kj[0], pg[0]):>6.3f} {ratio(kj[1], pg[1]):>6.3f}"
                f"  {ratio(kj[0], sq[0]):>6.3f} {ratio(kj[1], sq[1]):>6.3f}"
            )
        print(
            f"  goal (issue 40): at {GOAL_THREADS} threads kjournal saves ≥ {GOAL_SAVES:g}× and "
            f"gets ≥ {GOAL_GETS:g}× PostgreSQL's (each cell: save, get)"
        )
        print(
            "  PostgreSQL and SQLite are the library's own modules; kjournal goes over HTTP to "
            "the writer and the reader, Kafka and Cassandra"
        )
        print(f"host load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
