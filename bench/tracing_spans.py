"""The span code of an append, in process: what each sampler costs the writer's CPU.

    uv run python -m bench.tracing_spans [--appends 20000] [--rounds 5] [--ratios 0,0.01,0.05,1]

Runs the writer's own span code for one append, `ServerSpans` around an application that sends
one record through `ActionProducer.send` (the produce span and the record's trace headers), with
aiokafka's producer replaced by one that acknowledges at once: no HTTP, no Kafka, only tracing.
Each mode runs in a fresh interpreter (a process installs its tracer provider once), the modes
alternating round after round: `off` (OTEL_SDK_DISABLED=true), then
`parentbased_traceidratio` at each ratio, the SDK exporting over OTLP/HTTP to the local collector
of kjournal-dev (`scripts/dev up`, or OTEL_EXPORTER_OTLP_ENDPOINT). Prints the CPU time of the
process (its export thread included) per append, median of the rounds, and its excess over off;
with `--calls`, the Python calls per append (cProfile, the event loop's thread) instead.
Figures, never assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from statistics import median
from typing import Any

from bench._tracing import otlp_endpoint


def _env(mode: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    if mode == "off":
        return {**env, "OTEL_SDK_DISABLED": "true"}
    return {
        **env,
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": mode,
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_endpoint(),
    }


def measure(appends: int, calls: bool = False) -> float:
    """CPU seconds per append of this process, tracing as its environment says (with `calls`:
    the Python calls per append instead, counted by cProfile)."""
    from kjournal.kafka import producer as producer_module
    from kjournal.kafka.producer import ActionProducer
    from kjournal.kafka.settings import KafkaSettings
    from kjournal.spans import installed
    from kjournal.spans import tracer
    from kjournal.telemetry import configure_tracing
    from kjournal.wire.record import ProducerRecordParts
    from kjournal_service.server_spans import ServerSpans

    setup = configure_tracing("kjournal-writer")

    class Acknowledged:
        def __init__(self, **_: Any) -> None:
            self.offset = 0

        async def send(self, topic: str, **record: Any) -> asyncio.Future[Any]:
            self.offset += 1
            done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            done.set_result(type("Sent", (), {"partition": record["partition"], "offset": 1})())
            return done

    class Partitions:
        async def count(self, topic: str, refresh: bool = False) -> int:
            return 8

    producer_module.AIOKafkaProducer = Acknowledged  # type: ignore[attr-defined]
    producer = ActionProducer(KafkaSettings(), Partitions())  # type: ignore[arg-type]
    record = ProducerRecordParts("journal", b"order-1", b'{"events":[]}' * 8, [], 1)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await producer.send(record, {"kjournal.action": "append"})
        await send({"type": "http.response.start", "status": 201, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    served = ServerSpans(app, tracer()) if installed() else app
    scope = {
        "type": "http",
        "method": "POST",
        "scheme": "http",
        "http_version": "1.1",
        "path": "/v1/journals/journal/order-1/events",
        "headers": [(b"content-type", b"application/json")],
        "server": ("127.0.0.1", 8081),
        "client": ("127.0.0.1", 50000),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        return None

    async def run(count: int) -> None:
        for _ in range(count):
            await served(scope, receive, send)

    asyncio.run(run(appends // 10))  # warm-up
    if setup is not None:
        setup.flush()
    if calls:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.runcall(asyncio.run, run(appends))
        return float(pstats.Stats(profile).total_calls) / appends  # type: ignore[attr-defined]
    before = time.process_time()
    asyncio.run(run(appends))
    if setup is not None:
        setup.flush(30)  # the export of these appends' spans is their cost too
    return (time.process_time() - before) / appends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ratios", default="0,0.01,0.05,1")
    parser.add_argument(
        "--calls", action="store_true", help="count Python calls per append (cProfile) instead"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.appends, args.calls)))
        return
    modes = ["off", *args.ratios.split(",")]
    print("bench.tracing_spans")
    print(f"host        {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(
        f"parameters  {args.appends} appends per mode and round, {args.rounds} rounds, "
        f"spans to {otlp_endpoint()}"
    )
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    count = ["--appends", str(args.appends), *(["--calls"] if args.calls else [])]
    for _ in range(args.rounds):
        for mode in modes:
            done = subprocess.run(
                [sys.executable, "-m", "bench.tracing_spans", f"--child={mode}", *count],
                env=_env(mode),
                capture_output=True,
                text=True,
                check=True,
            )
            cpu[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    off = median(cpu["off"])
    for mode in modes:
        label = "off" if mode == "off" else f"parentbased_traceidratio {mode}"
        value = median(cpu[mode])
        if args.calls:
            print(f"{label:<32} {value:7.1f} calls per append (+{value - off:5.1f} over off)")
            continue
        print(
            f"{label:<32} {value * 1e6:7.1f} µs CPU per append (+{(value - off) * 1e6:5.1f} µs "
            f"over off; rounds {', '.join(f'{v * 1e6:.1f}' for v in cpu[mode])})"
        )
    print(f"load        {os.getloadavg()[0]:.1f} (after the run)")


if __name__ == "__main__":
    main()
