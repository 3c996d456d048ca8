"""What an HTTP append costs at the least on this host, step by step up to the guarantee, against
the CPU per append that 0.2 × the raw producer at c = 64 (issue 40) leaves.

    uv run python -m bench.http_floor [--seconds 10] [--level 64] [--rounds 2] [--payload-bytes 100]

Needs kjournal-dev's Kafka and Cassandra (`scripts/dev up`; the reader of the last step folds on
them) and wrk. Each step is bench/_bare_append.py on uvicorn (uvloop, httptools), loaded by wrk
with bench/http_append.lua exactly as `bench.http_append` loads the writer (c keep-alive
connections, one event per request), and adds to the step before it:

* **bare**: reads each body and answers 201, nothing else;
* **+ produce**: produces each body as it is through one AIOKafkaProducer with the writer's
  settings and answers after the ack: the least a Python HTTP append with acks=all does;
* **+ record**: produces the append's kafka-journal record through `kjournal.writes.WriteSide`
  (the events built from the body by hand; the record's encoding and kjournal's producer);
* **+ outcome**: `WritableJournal.append` with the writer's reader link: the answer waits for the
  reader's fold to decide the append, as the writer's does. A reader process (started here)
  folds this step's topic; the steps before write to a topic no reader follows.

Then `--rounds` times in turn, and the raw producer (`bench.http_append`'s: c tasks, one
AIOKafkaProducer, the writer's settings, kafka-journal records), the figure issue 40 compares
HTTP with. What the writer service adds on top of the last step (FastAPI and Starlette, pydantic
validation, metrics, the server span) is `bench.http_append`'s CPU per append less this one's.

Prints requests/s and CPU per request of the app, of the reader (last step), of wrk, and of the
whole host (Kafka included), the raw producer's rate, and the host CPU per append that 0.2 × that
rate leaves on this host's cores. No assertion is made.
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
from bench._http import writers_reader
from bench.http_append import Load
from bench.http_append import raw_level
from bench.http_append import wrk

PARTITIONS = 8
GOAL = 0.2  # HTTP appends over the raw producer at c = 64 (issue 40)
STEP_NAMES = {"none": "bare", "produce": "+ produce", "record": "+ record", "outcome": "+ outcome"}


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
    rows: dict[str, list[tuple[float, float, float, float, float]]] = {}
    raw_rates: list[float] = []
    with ExitStack() as stack:
        topic = stack.enter_context(bench_topic(bootstrap, PARTITIONS))
        folded = stack.enter_context(bench_topic(bootstrap, PARTITIONS))
        kafka = {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap}
        link, reader_pid = stack.enter_context(writers_reader(bootstrap, logs / "reader"))
        apps: dict[str, tuple[str, str, int]] = {}  # name: (topic, url, pid)
        for step, step_topic, extra in (
            ("none", topic, {}),
            ("produce", topic, {}),
            ("record", topic, {}),
            ("outcome", folded, link),
        ):
            settings = {**kafka, **extra, "BARE_APPEND_STEP": step, "BARE_APPEND_TOPIC": step_topic}
            process = service_process("bench._bare_append", settings, logs / step)
            apps[STEP_NAMES[step]] = (step_topic, *stack.enter_context(process))
        for round_ in range(args.rounds):
            for name, (app_topic, url, pid) in apps.items():
                prefix = f"floor-{round_}-{name.strip('+ ')}"
                load = Load(url, app_topic, prefix, args.level, args.seconds, args.payload_bytes)
                app_before, host_before = cpu_seconds(pid), host_busy_seconds()
                reader_before = cpu_seconds(reader_pid)
                result = wrk(load)
                app_cpu = (cpu_seconds(pid) - app_before) / result.count
                reader_cpu = (cpu_seconds(reader_pid) - reader_before) / result.count
                host_cpu = (host_busy_seconds() - host_before) / result.count
                wrk_cpu = result.client_cpu / result.count
                rows.setdefault(name, []).append(
                    (result.rate, app_cpu, reader_cpu, wrk_cpu, host_cpu)
                )
                print(
                    f"  round {round_ + 1} {name:<12} {result.line()}   CPU per request: app "
                    f"{app_cpu * 1e3:.3f} ms, reader {reader_cpu * 1e3:.3f} ms, wrk "
                    f"{wrk_cpu * 1e3:.3f} ms, host {host_cpu * 1e3:.3f} ms",
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
                f"  round {round_ + 1} {'raw producer':<12} {raw.line()}   CPU per record of "
                f"this process {(time.process_time() - before) / max(1, raw.count) * 1e3:.3f} ms "
                f"(its warm-up included)",
                flush=True,
            )
    raw_rate = median(raw_rates)
    budget = cores / (GOAL * raw_rate)
    print(f"medians of {args.rounds} rounds, c = {args.level}:")
    for name, figures in rows.items():
        rate, app, reader, wrk_cpu, host_cpu = (
            median(column) for column in zip(*figures, strict=True)
        )
        print(
            f"  {name:<12} {rate:>9,.0f} requests/s; CPU per request: app {app * 1e3:.3f} ms, "
            f"reader {reader * 1e3:.3f} ms, wrk {wrk_cpu * 1e3:.3f} ms, host "
            f"{host_cpu * 1e3:.3f} ms (at most {cores / host_cpu:,.0f} requests/s on {cores} cores)"
        )
    print(
        f"  raw producer {raw_rate:>9,.0f} appends/s; {GOAL:g} × that = "
        f"{GOAL * raw_rate:,.0f} appends/s, which leaves {budget * 1e3:.3f} ms of host CPU per "
        f"append on {cores} cores (the writer's, the reader's, wrk's and Kafka's together)"
    )
    print(f"load        {load_average()} (after the run); logs {logs}")


if __name__ == "__main__":
    main()
