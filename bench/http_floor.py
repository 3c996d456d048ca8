"""What an HTTP append costs at the least on this host, against the CPU per append that
0.2 × the raw producer at c = 64 (issue 40) leaves.

    uv run python -m bench.http_floor [--seconds 10] [--level 64] [--rounds 2] [--payload-bytes 100]

Needs kjournal-dev's Kafka (KJOURNAL_DEV_KAFKA_PORT, default 9092) and wrk. On a fresh topic of 8
partitions, `--rounds` times, in turn:

* **bare**: bench/_bare_append.py on uvicorn (uvloop, httptools), loaded by wrk with
  bench/http_append.lua exactly as `bench.http_append` loads the writer (c keep-alive connections,
  one event per request): it reads each body and answers 201, nothing else;
* **bare + produce**: the same app also producing each body through one AIOKafkaProducer with the
  writer's settings and answering after the ack (no validation, no kafka-journal record, no
  outcome, no tracing): the least a Python HTTP append with acks=all does;
* **raw**: `bench.http_append`'s raw producer (c tasks, one AIOKafkaProducer, the writer's
  settings, kafka-journal records), the figure issue 40 compares HTTP with.

Prints requests/s and CPU per request of the app, of wrk, and of the whole host (Kafka included),
the raw producer's rate, and the host CPU per append that 0.2 × that rate leaves on this host's
cores. No assertion is made.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from statistics import median

from kjournal.kafka.settings import KafkaSettings

from bench._host import load_average
from bench._http import bench_topic
from bench._http import cpu_seconds
from bench._http import host
from bench._http import host_busy_seconds
from bench._http import run
from bench._http import service_process
from bench.http_append import Load
from bench.http_append import raw_level
from bench.http_append import wrk

PARTITIONS = 8
GOAL = 0.2  # HTTP appends over the raw producer at c = 64 (issue 40)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--level", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--payload-bytes", type=int, default=100)
    args = parser.parse_args()
    bootstrap = f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}"
    cores = os.cpu_count() or 1
    print("bench.http_floor")
    print(f"host        {host()}")
    print(
        f"parameters  c = {args.level}, {args.seconds} s per run, 1 event per request, "
        f"~{args.payload_bytes} B JSON payload, {PARTITIONS} partitions, {args.rounds} rounds"
    )
    logs = Path(tempfile.mkdtemp(prefix="kjournal-bench-floor-"))
    rows: dict[str, list[tuple[float, float, float, float]]] = {}
    raw_rates: list[float] = []
    with ExitStack() as stack:
        topic = stack.enter_context(bench_topic(bootstrap, PARTITIONS))
        kafka = {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap}
        apps = {
            "bare": stack.enter_context(service_process("bench._bare_append", kafka, logs)),
            "bare + produce": stack.enter_context(
                service_process("bench._bare_append", {**kafka, "BARE_APPEND_TOPIC": topic}, logs)
            ),
        }
        for round_ in range(args.rounds):
            for name, (url, pid) in apps.items():
                load = Load(
                    url, topic, f"floor-{round_}-{name[:4]}", args.level, args.seconds,
                    args.payload_bytes,
                )  # fmt: skip
                app_before, host_before = cpu_seconds(pid), host_busy_seconds()
                result = wrk(load)
                app_cpu = (cpu_seconds(pid) - app_before) / result.count
                host_cpu = (host_busy_seconds() - host_before) / result.count
                wrk_cpu = result.client_cpu / result.count
                rows.setdefault(name, []).append((result.rate, app_cpu, wrk_cpu, host_cpu))
                print(
                    f"  round {round_ + 1} {name:<15} {result.line()}   CPU per request: app "
                    f"{app_cpu * 1e3:.3f} ms, wrk {wrk_cpu * 1e3:.3f} ms, host "
                    f"{host_cpu * 1e3:.3f} ms",
                    flush=True,
                )
            before = time.process_time()
            raw = run(
                raw_level(
                    KafkaSettings(bootstrap_servers=bootstrap),
                    topic,
                    PARTITIONS,
                    args.level,
                    args.seconds,
                    args.payload_bytes,
                )
            )
            raw_rates.append(raw.rate)
            print(
                f"  round {round_ + 1} {'raw producer':<15} {raw.line()}   CPU per record of "
                f"this process {(time.process_time() - before) / max(1, raw.count) * 1e3:.3f} ms "
                f"(its warm-up included)",
                flush=True,
            )
    raw_rate = median(raw_rates)
    budget = cores / (GOAL * raw_rate)
    print(f"medians of {args.rounds} rounds, c = {args.level}:")
    for name, figures in rows.items():
        rate, app, wrk_cpu, host_cpu = (median(column) for column in zip(*figures, strict=True))
        print(
            f"  {name:<15} {rate:>9,.0f} requests/s; CPU per request: app {app * 1e3:.3f} ms, "
            f"wrk {wrk_cpu * 1e3:.3f} ms, host {host_cpu * 1e3:.3f} ms "
            f"(at most {cores / host_cpu:,.0f} requests/s on {cores} cores)"
        )
    print(
        f"  raw producer    {raw_rate:>9,.0f} appends/s; {GOAL:g} × that = "
        f"{GOAL * raw_rate:,.0f} appends/s, which leaves {budget * 1e3:.3f} ms of host CPU per "
        f"append on {cores} cores (the writer's, the reader's, wrk's and Kafka's together)"
    )
    print(f"load        {load_average()} (after the run); logs {logs}")


if __name__ == "__main__":
    main()
