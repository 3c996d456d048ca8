"""Append throughput and latency over HTTP (the writer service) against a raw aiokafka producer.

    uv run python -m bench.http_append [--seconds 10] [--levels 1,16,64] [--payload-bytes 100]

Needs kjournal-dev's Kafka (KJOURNAL_DEV_KAFKA_PORT, default 9092). Starts a writer process
(uvicorn, uvloop, httptools; one worker) on a free port and, for each concurrency level c, runs c
clients for a fixed time, each with its own keep-alive connection and journal, appending one
event per request and waiting for the 201. In the same run, c tasks send the same records (same
keys, headers, JSON container, partitioner) through one raw AIOKafkaProducer with the writer's
producer settings (acks=all, idempotent, lz4, linger 1 ms) and wait for each ack. Prints
appends/s, p50 and p99 latency of both, and the ratio. The target is ≥ 5 000 appends/s at c=64 on
2 cores with p99 < 50 ms; no assertion is made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from aiokafka import AIOKafkaProducer
from kjournal.model import Event, Events, JsonPayload, Key, SeqNr
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import append_action, encode_action

from bench._http import RawHttp, bench_topic, host, percentile, run, service


@dataclass
class Result:
    count: int
    seconds: float
    latencies: list[float]

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def line(self) -> str:
        return (
            f"{self.rate:>9,.0f}/s  p50 {percentile(self.latencies, 0.5) * 1000:6.2f} ms  "
            f"p99 {percentile(self.latencies, 0.99) * 1000:6.2f} ms"
        )


def _payload(size: int, n: int) -> dict[str, object]:
    return {"n": n, "pad": "x" * max(0, size - 20)}


async def _run_for(seconds: float, workers: list, warmup: float = 1.0) -> Result:  # type: ignore[type-arg]
    latencies: list[float] = []
    stop_at = time.perf_counter() + warmup + seconds
    measure_from = time.perf_counter() + warmup

    async def loop(worker) -> int:
        count = 0
        while (now := time.perf_counter()) < stop_at:
            await worker()
            done = time.perf_counter()
            if now >= measure_from:
                latencies.append(done - now)
                count += 1
        return count

    counts = await asyncio.gather(*(loop(w) for w in workers))
    return Result(sum(counts), seconds, latencies)


async def http_level(url: str, topic: str, level: int, seconds: float, size: int) -> Result:
    connections = [await RawHttp.open(url) for _ in range(level)]
    workers = []
    for index, connection in enumerate(connections):
        path = f"/v1/journals/{topic}/http-{level}-{index}/events"
        seq = [0]

        async def append(
            connection: RawHttp = connection, path: str = path, seq: list[int] = seq
        ) -> None:
            seq[0] += 1
            body = json.dumps({"events": [{"seqNr": seq[0], "payload": _payload(size, seq[0])}]})
            status, answer = await connection.post(path, body.encode())
            if status != 201:
                raise SystemExit(f"append failed: {status} {answer[:200]!r}")

        workers.append(append)
    try:
        return await _run_for(seconds, workers)
    finally:
        for connection in connections:
            await connection.close()


async def raw_level(
    bootstrap: str, topic: str, partitions: int, level: int, seconds: float, size: int
) -> Result:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        compression_type="lz4",
        linger_ms=1,
    )
    await producer.start()
    workers = []
    for index in range(level):
        key = Key(topic, f"raw-{level}-{index}")
        partition = partition_for(key.id.encode(), partitions)
        seq = [0]

        async def send(key: Key = key, partition: int = partition, seq: list[int] = seq) -> None:
            seq[0] += 1
            event = Event(SeqNr(seq[0]), payload=JsonPayload(_payload(size, seq[0])))  # type: ignore[arg-type]
            action = append_action(key, datetime.now(UTC), Events((event,)), origin="bench")
            record = encode_action(action)
            await producer.send_and_wait(
                record.topic,
                value=record.value,
                key=record.key,
                partition=partition,
                timestamp_ms=record.timestamp_ms,
                headers=record.headers,
            )

        workers.append(send)
    try:
        return await _run_for(seconds, workers)
    finally:
        await producer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--levels", default="1,16,64")
    parser.add_argument("--payload-bytes", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1, help="writer processes")
    args = parser.parse_args()
    bootstrap = f"127.0.0.1:{os.environ.get('KJOURNAL_DEV_KAFKA_PORT', '9092')}"
    levels = [int(level) for level in args.levels.split(",")]

    print("bench.http_append")
    print(f"host        {host()}")
    print(
        f"parameters  {args.seconds:g} s per level (after 1 s warm-up), 1 event per append, "
        f"~{args.payload_bytes} B JSON payload, {args.partitions} partitions, Kafka {bootstrap}"
    )
    print(
        f"writer      {args.workers} uvicorn worker(s) (uvloop, httptools); clients: raw "
        "keep-alive HTTP/1.1 on uvloop, in this process"
    )
    logs = Path(tempfile.mkdtemp(prefix="kjournal-bench-"))
    with (
        bench_topic(bootstrap, args.partitions) as topic,
        service(
            "kjournal_writer",
            {
                "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
                "KJOURNAL_HTTP__WORKERS": str(args.workers),
            },
            logs,
        ) as url,
    ):
        print(f"{'c':>4}  {'HTTP (writer service)':<44}  {'raw aiokafka producer':<44}  http/raw")
        for level in levels:
            http = run(http_level(url, topic, level, args.seconds, args.payload_bytes))
            raw = run(
                raw_level(
                    bootstrap, topic, args.partitions, level, args.seconds, args.payload_bytes
                )
            )
            print(f"{level:>4}  {http.line():<44}  {raw.line():<44}  {http.rate / raw.rate:7.2f}")


if __name__ == "__main__":
    main()
