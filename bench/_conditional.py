"""`bench.http_append --conditional`: what a condition costs an append, and what a second writer
process adds (issue 25).

One reader (kjournal-dev's Kafka and Cassandra) and two writer processes asking it for their
appends' outcomes. wrk (bench/http_append.lua) sends one event per append to 1,000
journals over c keep-alive connections, each journal with one append in flight at a time and its
seqNr tracked: conditional (`If-None-Match: *` for a journal's first append, then `If-Match:
"<its seqNr>"`) or unconditional (the same seqNrs, no header). Each measured run writes fresh
journals. For each mode, in the same run, alternating `--rounds` times:

* one writer: one wrk, c connections, 1,000 journals;
* two writers: one wrk per writer at once, c/2 connections and 500 journals each.

Prints each run, then the medians: appends/s, p50/p99 latency, the writers' and the reader's CPU
per append, conditional over unconditional and two writers over one; and the host's ceiling for
two writers over one: its cores over those the one-writer runs kept busy (the total load is the
same c connections either way, so a second writer can only add what idle cores allow). Any answer but a 2xx (a 412
included: every condition should hold) fails the run.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
from kjournal.kafka.settings import KafkaSettings

from bench._http import bench_topic
from bench._http import cpu_seconds
from bench._http import host_busy_seconds
from bench._http import service_process
from bench._http import writers_reader
from bench.http_append import WARMUP_S
from bench.http_append import Load
from bench.http_append import Result
from bench.http_append import wrk_side_by_side

__all__ = ["compare_conditional"]

JOURNALS = 1_000
MODES = ("unconditional", "conditional")


@dataclass(frozen=True)
class Run:
    appends: int
    seconds: float
    p50: float
    p99: float
    writer_cpu: float  # seconds, all writers
    reader_cpu: float
    host_cores: float
    load: float  # the host's 1-minute load average at the end

    @property
    def rate(self) -> float:
        return self.appends / self.seconds


def _load(
    writers: list[str], topic: str, prefix: str, level: int, seconds: int, size: int, mode: str
) -> list[Result]:
    """One wrk per writer at once, the connections and journals split between them."""
    loads = {
        f"w{n}": Load(
            url,
            topic,
            f"{prefix}-w{n}",
            level // len(writers),
            seconds,
            size,
            journals=JOURNALS // len(writers),
            mode=mode,
        )
        for n, url in enumerate(writers)
    }
    return list(wrk_side_by_side(loads).values())


def _appends_answered(url: str) -> float:
    """How many appends the writer has answered so far (its request counter)."""
    total = 0.0
    for line in httpx.get(url + "/metrics", timeout=10).text.splitlines():
        if line.startswith(_ANSWERED) and 'method="POST"' in line and "/events" in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


_ANSWERED = "kjournal_http_request_seconds_count{"


def _drain(urls: list[str], timeout_s: float = 300.0) -> None:
    """Until the writers answered every append wrk left in flight when it stopped: their answer
    counters hold still for a second (an overloaded host leaves many behind)."""
    deadline = time.monotonic() + timeout_s
    counts = [_appends_answered(url) for url in urls]
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = [_appends_answered(url) for url in urls]
        if now == counts:
            return
        counts = now
    raise SystemExit(f"the writers still answer appends {timeout_s:.0f} s after the load stopped")


def _measure(
    writers: list[tuple[str, int]],
    reader_pid: int,
    topic: str,
    prefix: str,
    level: int,
    seconds: int,
    size: int,
    mode: str,
) -> Run:
    urls = [url for url, _ in writers]
    _load(urls, topic, f"warm-{prefix}", level, WARMUP_S, size, mode)
    _drain(urls)
    writer_before = sum(cpu_seconds(pid) for _, pid in writers)
    reader_before, host_before = cpu_seconds(reader_pid), host_busy_seconds()
    results = _load(urls, topic, prefix, level, seconds, size, mode)
    elapsed = max(result.seconds for result in results)
    run = Run(
        sum(result.count for result in results),
        elapsed,
        max(result.p50 for result in results),
        max(result.p99 for result in results),
        sum(cpu_seconds(pid) for _, pid in writers) - writer_before,
        cpu_seconds(reader_pid) - reader_before,
        (host_busy_seconds() - host_before) / elapsed,
        os.getloadavg()[0],
    )
    _drain(urls)  # the appends still in flight count in no run: they must not weigh on the next
    return run


def _line(label: str, run: Run) -> str:
    per = max(1, run.appends)
    return (
        f"{label:<28} {run.rate:>8,.0f}/s  p50 {run.p50 * 1000:6.2f} ms  p99 "
        f"{run.p99 * 1000:6.2f} ms  CPU/append writers {run.writer_cpu / per * 1000:5.2f} ms, "
        f"reader {run.reader_cpu / per * 1000:5.2f} ms  host cores {run.host_cores:4.2f}  "
        f"load {run.load:4.1f}"
    )


def compare_conditional(kafka: KafkaSettings, level: int, args: argparse.Namespace) -> None:
    logs = Path(tempfile.mkdtemp(prefix="kjournal-bench-conditional-"))
    print(
        f"conditional c={level}, {JOURNALS:,} journals, 1 event per append, {args.seconds} s per "
        f"run (after {WARMUP_S} s warm-up), {args.rounds} round(s); one reader, writers asking it "
        "each append's outcome; each run's journals are new (their first append If-None-Match)"
    )
    with ExitStack() as stack:
        topic = stack.enter_context(bench_topic(kafka.bootstrap_servers, args.partitions))
        link, reader_pid = stack.enter_context(
            writers_reader(kafka.bootstrap_servers, logs / "reader")
        )
        env = {
            "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
            "KJOURNAL_KAFKA__LINGER_MS": str(kafka.linger_ms),
            **link,
        }
        writers = [
            stack.enter_context(service_process("kjournal_writer", env, logs / f"writer-{n}"))
            for n in range(2)
        ]
        runs: dict[tuple[int, str], list[Run]] = {}
        for round_ in range(args.rounds):
            for count in (1, 2):
                for mode in MODES:
                    prefix = f"cond-{round_}-{count}-{mode}"
                    run = _measure(
                        writers[:count],
                        reader_pid,
                        topic,
                        prefix,
                        level,
                        args.seconds,
                        args.payload_bytes,
                        mode,
                    )
                    runs.setdefault((count, mode), []).append(run)
                    print(
                        _line(f"{count} writer{'s' if count > 1 else ''} {mode}", run), flush=True
                    )
    rate = {key: statistics.median(run.rate for run in values) for key, values in runs.items()}
    print(f"conditional medians of {args.rounds} round(s), appends/s:")
    for count in (1, 2):
        unconditional, conditional = rate[(count, "unconditional")], rate[(count, "conditional")]
        print(
            f"  {count} writer{'s' if count > 1 else ' '}  unconditional {unconditional:>8,.0f}  "
            f"conditional {conditional:>8,.0f}  conditional/unconditional "
            f"{_ratio(conditional, unconditional):.2f}"
        )
    for mode in MODES:
        print(f"  two writers/one, {mode}: {_ratio(rate[(2, mode)], rate[(1, mode)]):.2f}")
    for mode in MODES:
        print(_ceiling(mode, runs[(1, mode)]))


def _ceiling(mode: str, one_writer: list[Run]) -> str:
    """What the host allows two writers over one at most: the same total load (c connections)
    gains from a second writer process only while cores are left idle, and every append costs
    the host about what it cost with one writer (its CPU per append, all processes counted)."""
    cores = os.cpu_count() or 1
    busy = statistics.median(run.host_cores for run in one_writer)
    host_ms = statistics.median(
        run.host_cores * run.seconds / max(1, run.appends) for run in one_writer
    )
    writer_ms = statistics.median(run.writer_cpu / max(1, run.appends) for run in one_writer)
    return (
        f"  host ceiling of two writers/one, {mode}: {_ratio(cores, busy):.2f} ({cores} cores / "
        f"{busy:.2f} busy with one writer; an append costs the host {host_ms * 1000:.1f} ms of "
        f"CPU, {writer_ms * 1000:.2f} ms of it the writer's)"
    )


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan
