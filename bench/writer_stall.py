"""How long one large append holds up the writer's other requests.

    uv run python -m bench.writer_stall [--events 200000] [--probe-ms 5]

Needs kjournal-dev's Kafka and Cassandra (`scripts/dev up`). Starts a reader, which the writers
ask for their appends' outcomes, and the writer twice, on free ports, and while a client posts one
append of `--events` events (`{"seqNr": n}` each, 3.4 MB for 200 000: under the 4 MiB body limit),
a probe sends `GET /healthz` every `--probe-ms` on its own connection. Prints, for each writer,
what the append got and when, and the worst and p99 `/healthz` latency while it was under way:

* baseline: the writer as it was before bodies were parsed off the event loop and appends were
  capped (`KJOURNAL_HTTP__OFFLOAD_BODY_BYTES` and `KJOURNAL_HTTP__MAX_EVENTS_PER_APPEND` set out
  of reach): the body is parsed and all its events validated on the event loop;
* default settings: refused (400 too-many-events) after a parse in a worker thread;
* default settings, the largest append they take (`--accepted`, 10 000 events), which is
  validated and encoded in a worker thread and acknowledged by Kafka.

The writer's `/healthz` answers in well under a millisecond when nothing holds the loop, so the
worst latency is the longest stall. No assertion is made.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench._http import bench_topic
from bench._http import host
from bench._http import percentile
from bench._http import service
from bench._http import writers_reader


@dataclass(frozen=True)
class Stall:
    label: str
    status: int
    detail: str
    append_s: float
    probes: list[float]

    def line(self) -> str:
        worst = max(self.probes, default=float("nan"))
        p99 = percentile(self.probes, 0.99)
        return (
            f"{self.label:<44} {self.status} {self.detail:<18} in {self.append_s:6.2f} s   "
            f"/healthz worst {worst * 1000:8.1f} ms  p99 {p99 * 1000:7.1f} ms  "
            f"({len(self.probes)} probes)"
        )


def body(events: int) -> bytes:
    return b'{"events":[' + b",".join(b'{"seqNr":%d}' % n for n in range(1, events + 1)) + b"]}"


async def measure(url: str, topic: str, label: str, events: int, probe_s: float) -> Stall:
    content = body(events)
    probes: list[float] = []
    async with httpx.AsyncClient(timeout=120) as appender, httpx.AsyncClient(timeout=120) as probe:
        await probe.get(url + "/healthz")  # both connections open before the clock starts
        started = time.perf_counter()
        append = asyncio.create_task(
            appender.post(
                f"{url}/v1/journals/{topic}/stall-{events}/events",
                content=content,
                headers={"content-type": "application/json"},
            )
        )
        while not append.done():
            sent = time.perf_counter()
            await probe.get(url + "/healthz")
            probes.append(time.perf_counter() - sent)
            await asyncio.sleep(probe_s)
        response = await append
        append_s = time.perf_counter() - started
    detail = (
        response.json().get("type", "").rsplit(":", 1)[-1] if response.status_code >= 400 else ""
    )
    return Stall(label, response.status_code, detail or "appended", append_s, probes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--accepted", type=int, default=10_000)
    parser.add_argument("--probe-ms", type=float, default=5.0)
    args = parser.parse_args()
    if args.events < 1 or args.accepted < 1 or args.probe_ms <= 0:
        parser.error("--events and --accepted must be at least 1, --probe-ms above 0")
    from kjournal_dev.config import DevConfig

    bootstrap = DevConfig.from_env().kafka_bootstrap
    probe_s = args.probe_ms / 1000
    print(f"host: {host()}")
    print(
        f"one append of {args.events:,} events ({len(body(args.events)):,} bytes); "
        f"/healthz probed every {args.probe_ms:g} ms"
    )
    baseline = {
        "KJOURNAL_HTTP__OFFLOAD_BODY_BYTES": str(1 << 40),
        "KJOURNAL_HTTP__MAX_EVENTS_PER_APPEND": str(1 << 40),
    }
    with (
        tempfile.TemporaryDirectory() as logs,
        bench_topic(bootstrap) as topic,
        writers_reader(bootstrap, Path(logs) / "reader") as (link, _),
    ):
        kafka = {"KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap, **link}
        results = []
        with service("kjournal_writer", {**kafka, **baseline}, Path(logs) / "baseline") as url:
            label = "baseline (parsed on the loop, no cap)"
            results.append(asyncio.run(measure(url, topic, label, args.events, probe_s)))
        with service("kjournal_writer", kafka, Path(logs) / "default") as url:
            label = "default settings"
            results.append(asyncio.run(measure(url, topic, label, args.events, probe_s)))
            label = f"default settings, {args.accepted:,} events"
            results.append(asyncio.run(measure(url, topic, label, args.accepted, probe_s)))
    for result in results:
        print(result.line())


if __name__ == "__main__":
    main()
