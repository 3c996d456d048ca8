"""Append throughput and latency over HTTP (the writer service) against a raw aiokafka producer.

    uv run python -m bench.http_append [--seconds 10] [--levels 1,16,64] [--payload-bytes 100]
                                       [--workers 1] [--linger-ms 0]
                                       [--secure-state DIR [--rounds N] [--security-only]]
                                       [--conditional [--rounds N]]

Needs kjournal-dev's Kafka (KJOURNAL_DEV_KAFKA_PORT, default 9092) and wrk, the C HTTP load
generator (`apt-get install -y wrk`), so that the load costs little of the CPU the writer, Kafka
and Cassandra share. Starts a writer process (uvicorn, uvloop, httptools; `--workers` worker
processes) on a free port with the default Kafka settings (but `--linger-ms`, default the
writer's) and, for each concurrency level c:

* HTTP: `wrk -t1 -cC` (bench/http_append.lua) for 1 s of warm-up, then for the measured time:
  c keep-alive connections, each sending its next append once the previous one is answered; one
  event per request, to c journals, each with one append in flight at a time and increasing
  seqNrs. Any answer but a 2xx, or a socket error, fails the run.
* raw: c tasks in this process send the same records (same keys, headers, JSON container,
  partitioner) through one AIOKafkaProducer with the writer's producer settings
  (`kjournal.kafka.producer.producer_options`: acks=all, bounded delivery, lz4, linger) and wait for
  each ack, for 1 s of warm-up and then the measured time.

With `--secure-state` (the state directory of a running `kjournal-dev up --secure`), it then
compares, in the same run, appends with HTTP authentication on and off and with Kafka SCRAM on
and off (bench/_security.py).

Prints appends/s, p50 and p99 latency of both and the ratio; for HTTP also the writer's CPU time
per append, the CPU time of the reader that answers its outcomes per append, and, as "cores", the
cores the writer (all its processes), wrk and the whole host kept busy during the run: Kafka,
Cassandra and anything else running share them too. The goals (issue 40): with the guarantee,
≥ 0.2 × the raw producer at c = 64 and p50 < 3 ms at c = 1, the reader's CPU per outcome
≤ 0.2 ms and the writer's per append ≤ 0.5 ms; no assertion is made.

`--conditional` compares, instead of HTTP with raw, conditional appends with unconditional ones
and two writer processes with one, each writer asking a reader for outcomes (bench/_conditional.py;
needs kjournal-dev's Cassandra too: `scripts/dev up`), e.g. `--conditional --levels 64`.

`--tracing off,default,on` runs one writer per mode (bench/_tracing.py: `off` is
OTEL_SDK_DISABLED=true, `default` samples as the Helm chart does by default, `on` samples and
exports every span to the local collector) and measures them in turn at each level, `--rounds`
times (alternating, so that a burst of other work on the host hits all), then prints each level's
median throughput and CPU per append of each mode over off.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from statistics import median
from typing import Any

from aiokafka import AIOKafkaProducer
from kjournal.kafka.producer import producer_options
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import append_action
from kjournal.wire.record import encode_action

from bench._host import load_average
from bench._http import bench_topic
from bench._http import cpu_seconds
from bench._http import host
from bench._http import host_busy_seconds
from bench._http import percentile
from bench._http import run
from bench._http import service_process
from bench._http import writers_reader
from bench._tracing import label as tracing_label
from bench._tracing import modes as tracing_modes
from bench._tracing import tracing_env

WRK_SCRIPT = Path(__file__).with_suffix(".lua")
WARMUP_S = 1


@dataclass(frozen=True)
class Result:
    count: int
    seconds: float
    p50: float
    p99: float
    client_cpu: float = 0.0  # HTTP: wrk's CPU seconds

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def line(self) -> str:
        return f"{self.rate:>9,.0f}/s  p50 {self.p50 * 1000:6.2f} ms  p99 {self.p99 * 1000:6.2f} ms"


def _payload(size: int, n: int) -> JsonValue:
    """What bench/http_append.lua sends: {"n": seqNr, "pad": "xxx..."}."""
    return {"n": n, "pad": "x" * max(0, size - 20)}


@dataclass(frozen=True)
class Load:
    """One wrk run of bench/http_append.lua: `level` connections for `seconds` s, appending
    `size`-byte events to `journals` journals (default: one per connection) as the script's MODE
    says, each request with the next bearer token of `tokens` (a file of one per line) if given."""

    url: str
    topic: str
    prefix: str
    level: int
    seconds: int
    size: int
    tokens: Path | None = None
    journals: int | None = None
    mode: str = "counter"

    def start(self) -> subprocess.Popen[str]:
        command = ["wrk", "-t1", f"-c{self.level}", f"-d{self.seconds}s", "--timeout", "10s"]
        command += ["-s", str(WRK_SCRIPT), self.url, "--", self.topic, self.prefix]
        command += [str(self.journals or self.level), str(self.size), self.mode]
        if self.tokens is not None:
            command.append(str(self.tokens))
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def result(self, process: subprocess.Popen[str], before: Any = None) -> Result:
        """What the run of `process` measured, once it ended: with wrk's CPU if `before` is the
        children's rusage from before it started (so only of a run alone). SystemExit if any
        answer was not a 2xx or a socket failed."""
        out, err = process.communicate()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return _result(self.level, process.returncode, out, err, after, before or after)


def wrk(load: Load) -> Result:
    """One wrk run, alone."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    return load.result(load.start(), before)


def wrk_side_by_side(loads: dict[str, Load]) -> dict[str, Result]:
    """The wrk runs all at once: each writer under the same host load."""
    started = {name: load.start() for name, load in loads.items()}
    return {name: loads[name].result(process) for name, process in started.items()}


def _result(level: int, code: int, stdout: str, stderr: str, after: Any, before: Any) -> Result:
    figures = dict(
        line.removeprefix("bench.").split(" ", 1)
        for line in stdout.splitlines()
        if line.startswith("bench.")
    )
    if code != 0 or "requests" not in figures:
        raise SystemExit(f"wrk failed ({code}): {stderr.strip() or stdout}")
    errors = figures["socket_errors"]
    if figures["non_2xx"] != "0" or any(int(n.split()[-1]) for n in errors.split(",")):
        raise SystemExit(
            f"c={level}: {figures['non_2xx']} appends not answered 2xx, socket errors: {errors}; "
            f"first failure: {figures['first_failure'] or '-'}"
        )
    return Result(
        int(figures["requests"]),
        int(figures["duration_us"]) / 1e6,
        int(figures["p50_us"]) / 1e6,
        int(figures["p99_us"]) / 1e6,
        after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
    )


async def raw_level(
    kafka: KafkaSettings, topic: str, partitions: int, level: int, seconds: float, size: int
) -> Result:
    """As the writer would append them (origin, version, timestamp), one journal per task."""
    producer = AIOKafkaProducer(**producer_options(kafka))
    await producer.start()
    origin = socket.gethostname()
    library = f"kjournal-python/{version('kjournal')}"
    seq_nrs = itertools.count(1)  # one counter, as the wrk script does
    latencies: list[float] = []
    measure_from = time.perf_counter() + WARMUP_S
    stop_at = measure_from + seconds

    async def task(index: int) -> None:
        key = Key(topic, f"raw-{level}-{index}")
        partition = partition_for(key.id.encode(), partitions)
        while (started := time.perf_counter()) < stop_at:
            seq_nr = next(seq_nrs)
            event = Event(SeqNr(seq_nr), payload=JsonPayload(_payload(size, seq_nr)))
            action = append_action(
                key, datetime.now(UTC), Events((event,)), origin=origin, version=library
            )
            record = encode_action(action)
            await producer.send_and_wait(
                record.topic,
                value=record.value,
                key=record.key,
                partition=partition,
                timestamp_ms=record.timestamp_ms,
                headers=record.headers,
            )
            if started >= measure_from:
                latencies.append(time.perf_counter() - started)

    try:
        await asyncio.gather(*(task(index) for index in range(level)))
    finally:
        await producer.stop()
    return Result(len(latencies), seconds, percentile(latencies, 0.5), percentile(latencies, 0.99))


def side_by_side(
    writers: dict[str, tuple[str, int]], topic: str, levels: list[int], args: Any
) -> None:
    """Both writers loaded at once, so that whatever else runs on the host weighs on both."""
    for level in levels:
        shares: dict[str, list[float]] = {}
        rates: dict[str, list[float]] = {}
        for round_ in range(args.rounds):
            loads = {
                mode: Load(
                    url,
                    topic,
                    f"side-{level}-{round_}-{mode}",
                    level,
                    args.seconds,
                    args.payload_bytes,
                )
                for mode, (url, _) in writers.items()
            }
            before = {mode: cpu_seconds(pid) for mode, (_, pid) in writers.items()}
            results = wrk_side_by_side(loads)
            for mode, (_, pid) in writers.items():
                used = cpu_seconds(pid) - before[mode]
                result = results[mode]
                shares.setdefault(mode, []).append(used / max(1, result.count))
                rates.setdefault(mode, []).append(result.rate)
                print(
                    f"{level:>4} {mode:<3} side by side  {result.line():<40}  "
                    f"{used / max(1, result.count) * 1000:7.3f} ms CPU/append",
                    flush=True,
                )
        on, off = median(shares["on"]), median(shares["off"])
        rate_on, rate_off = median(rates["on"]), median(rates["off"])
        print(
            f"tracing c={level} side by side (medians of {args.rounds}): writer CPU per append "
            f"on {on * 1e3:.3f} ms, off {off * 1e3:.3f} ms, off/on {off / on:.3f} (the throughput "
            f"a CPU-bound writer keeps: {(1 - off / on) * 100:.1f} % lost); appends/s on "
            f"{rate_on:,.0f}, off {rate_off:,.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per level")
    parser.add_argument("--levels", default="1,16,64")
    parser.add_argument("--payload-bytes", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1, help="writer processes")
    parser.add_argument(
        "--tracing",
        default="",
        help="e.g. off,default,on: a writer per tracing mode, in turn",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure each tracing mode this often, alternating; security comparison rounds",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="with --tracing off,on: also load both writers at once and compare CPU per append",
    )
    parser.add_argument(
        "--linger-ms", type=int, default=KafkaSettings().linger_ms, help="both producers' linger"
    )
    parser.add_argument(
        "--secure-state",
        type=Path,
        help="state directory of a running `kjournal-dev up --secure`: compare auth and SCRAM",
    )
    parser.add_argument("--security-only", action="store_true", help="only the security comparison")
    parser.add_argument(
        "--conditional",
        action="store_true",
        help="instead: conditional vs unconditional appends, one writer vs two (bench/_conditional.py)",
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("bench.http_append needs wrk: apt-get install -y wrk")
    kafka = KafkaSettings(
        bootstrap_servers=f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}",
        linger_ms=args.linger_ms,
    )
    levels = [int(level) for level in args.levels.split(",")]

    print("bench.http_append")
    print(f"host        {host()}")
    print(
        f"parameters  {args.seconds} s per level (after {WARMUP_S} s warm-up), 1 event per append, "
        f"~{args.payload_bytes} B JSON payload, {args.partitions} partitions, "
        f"Kafka {kafka.bootstrap_servers} (linger {kafka.linger_ms} ms, {kafka.compression})"
    )
    print(
        f"writer      {args.workers} uvicorn worker process{'es' if args.workers > 1 else ''} "
        "(uvloop, httptools); HTTP load: wrk -t1 -c<c>, keep-alive; "
        "raw: one AIOKafkaProducer in this process"
    )
    if args.conditional:
        from bench._conditional import compare_conditional  # it uses this module's wrk result

        for level in levels:
            compare_conditional(kafka, level, args)
    elif not args.security_only:
        _compare_with_raw(kafka, levels, args)
    if args.secure_state is not None:
        from bench._security import compare  # it uses this module's wrk()

        compare(
            kafka,
            args.secure_state,
            levels,
            args.seconds,
            args.payload_bytes,
            args.workers,
            args.rounds,
        )
    print(f"load        {load_average()} (after the run)")


def _compare_with_raw(kafka: KafkaSettings, levels: list[int], args: argparse.Namespace) -> None:
    modes = tracing_modes(args.tracing) if args.tracing else []
    logs = Path(tempfile.mkdtemp(prefix="kjournal-bench-"))
    with ExitStack() as stack:
        topic = stack.enter_context(bench_topic(kafka.bootstrap_servers, args.partitions))
        # The raw producer's records go to a topic of their own: the reader folds every record of
        # the writers' topic, and its CPU per outcome is the writers' appends' alone.
        raw_topic = stack.enter_context(bench_topic(kafka.bootstrap_servers, args.partitions))
        # The reader samples as the chart does by default whenever the writers' tracing is set
        # (a parent-based sampler then follows each writer's decision for its questions).
        reader_tracing = tracing_env("default") if modes else {}
        link, reader_pid = stack.enter_context(
            writers_reader(kafka.bootstrap_servers, logs / "reader", reader_tracing)
        )
        writer_env = {
            "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
            "KJOURNAL_KAFKA__LINGER_MS": str(kafka.linger_ms),
            "KJOURNAL_HTTP__WORKERS": str(args.workers),
            **link,
        }
        writers = {
            mode: stack.enter_context(
                service_process(
                    "kjournal_writer", {**writer_env, **tracing_env(mode)}, logs / f"tracing-{mode}"
                )
            )
            for mode in modes or [""]
        }
        if modes:
            print(f"tracing     {', '.join(modes)}: one writer each, measured in turn per level")
        print(
            f"{'c':>4}  {'HTTP (writer service)':<40}  {'CPU/append':<10}  {'reader/outcome':<14}  "
            f"{'cores writer/wrk/host':<21}  "
            f"{'raw aiokafka producer':<40}  http/raw"
        )
        rates: dict[tuple[int, str], list[float]] = {}
        cpu: dict[tuple[int, str], list[float]] = {}
        for level in levels:
            for round_ in range(args.rounds):
                for mode, (url, pid) in writers.items():
                    # each round's journals are new: wrk numbers every run's seqNrs from 1
                    run_id = f"{level}-{mode}-{round_}"
                    wrk(Load(url, topic, f"warmup-{run_id}", level, WARMUP_S, args.payload_bytes))
                    writer_before, host_before = cpu_seconds(pid), host_busy_seconds()
                    reader_before = cpu_seconds(reader_pid)
                    http = wrk(
                        Load(url, topic, f"http-{run_id}", level, args.seconds, args.payload_bytes)
                    )
                    writer_cpu = cpu_seconds(pid) - writer_before
                    reader_cpu = cpu_seconds(reader_pid) - reader_before
                    host_cores = (host_busy_seconds() - host_before) / http.seconds
                    rates.setdefault((level, mode), []).append(http.rate)
                    cpu.setdefault((level, mode), []).append(writer_cpu / max(1, http.count))
                    raw = run(
                        raw_level(
                            kafka,
                            raw_topic,
                            args.partitions,
                            level,
                            args.seconds,
                            args.payload_bytes,
                        )
                    )
                    label = f"{level:>4}" + (f" {mode[:3]:<3}" if mode else "")
                    print(
                        f"{label}  {http.line():<40}  "
                        f"{writer_cpu / max(1, http.count) * 1000:7.2f} ms  "
                        f"{reader_cpu / max(1, http.count) * 1000:7.3f} ms     "
                        f"{writer_cpu / http.seconds:4.2f}/{http.client_cpu / http.seconds:4.2f}/"
                        f"{host_cores:4.2f}{'':7}  {raw.line():<40}  {http.rate / raw.rate:7.2f}",
                        flush=True,
                    )
        if args.side_by_side and "on" in modes and "off" in modes:
            side_by_side(writers, topic, levels, args)
        if "off" in modes:
            _tracing_over_off(modes, levels, rates, cpu, args.rounds)


def _tracing_over_off(
    modes: list[str],
    levels: list[int],
    rates: dict[tuple[int, str], list[float]],
    cpu: dict[tuple[int, str], list[float]],
    rounds: int,
) -> None:
    """Each tracing mode's median throughput and writer CPU per append over `off`'s."""
    for level in levels:
        off, cpu_off = median(rates[(level, "off")]), median(cpu[(level, "off")])
        for mode in modes:
            if mode == "off":
                continue
            rate, cpu_mode = median(rates[(level, mode)]), median(cpu[(level, mode)])
            print(
                f"tracing c={level} (medians of {rounds} rounds): {tracing_label(mode)} "
                f"{rate:,.0f}/s, off {off:,.0f}/s, {mode}/off {rate / off:.3f} "
                f"({(1 - rate / off) * 100:+.1f} % throughput lost); writer CPU per append "
                f"{mode} {cpu_mode * 1e3:.3f} ms, off {cpu_off * 1e3:.3f} ms "
                f"({(cpu_mode / cpu_off - 1) * 100:+.1f} %)"
            )


if __name__ == "__main__":
    main()
