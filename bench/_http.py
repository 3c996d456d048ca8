"""Shared by the HTTP benchmarks: the host, a service process and the CPU it uses, percentiles, a
throw-away topic and a throw-away keyspace."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Coroutine
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from typing import TypeVar

import httpx
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic
from cassandra.cluster import Session
from kjournal.cassandra.schema import migrate
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal_dev.platform.lifecycle import Endpoints

from bench._host import host_line
from bench._host import load_average


def host() -> str:
    return (
        f"{host_line()}, load average {load_average()} (Kafka, Cassandra and whatever else runs "
        "share these cores)"
    )


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run with uvloop when it is installed: the client should cost as little CPU as it can."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


T = TypeVar("T")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def service(module: str, settings: dict[str, str], log_dir: Path) -> Iterator[str]:
    """Run `python -m <module>` on a free port until the block ends; yields its base URL."""
    with service_process(module, settings, log_dir) as (url, _):
        yield url


@contextmanager
def service_process(
    module: str, settings: dict[str, str], log_dir: Path
) -> Iterator[tuple[str, int]]:
    """`service`, yielding the process id too (see `cpu_seconds`)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KJOURNAL_") or "DEV" in k}
    env.update({"KJOURNAL_HTTP__PORT": str(port), "KJOURNAL_HTTP__LOG_FORMAT": "text", **settings})
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / f"{module}.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", module], stdout=log, stderr=subprocess.STDOUT, env=env
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"{module} exited; see {log_dir / (module + '.log')}")
            try:
                if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"{module} not ready in 60 s")
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


def host_busy_seconds() -> float:
    """CPU time all processes of the host have used so far (user, nice, system, irq, softirq,
    steal), summed over its cores."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU used so far by a process and its live descendants (uvicorn workers)."""
    ticks = 0
    pending = [pid]
    while pending:
        proc = Path(f"/proc/{pending.pop()}")
        try:
            # the fields after the command name, which is in parentheses and may hold spaces
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
            for task in (proc / "task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue  # exited meanwhile
    return ticks / os.sysconf("SC_CLK_TCK")


async def _admin(bootstrap: str, create: str | None, delete: str | None, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        if create:
            await admin.create_topics([NewTopic(create, partitions, 1)])
            for _ in range(100):
                described = await admin.describe_topics([create])
                parts = described[0].get("partitions") or []
                if len(parts) == partitions and all(p.get("leader", -1) >= 0 for p in parts):
                    break
                await asyncio.sleep(0.05)
        if delete:
            await admin.delete_topics([delete])
    finally:
        await admin.close()


@contextmanager
def bench_topic(bootstrap: str, partitions: int = 8) -> Iterator[str]:
    name = f"journal_bench_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(bootstrap, name, None, partitions))
    try:
        yield name
    finally:
        asyncio.run(_admin(bootstrap, None, name, partitions))


@contextmanager
def bench_keyspace(endpoints: Endpoints) -> Iterator[tuple[Session, CassandraSettings]]:
    """A fresh keyspace with the journal schema on the platform's Cassandra, dropped afterwards:
    a session to it, and the settings that name it."""
    cassandra = CassandraSettings(
        contact_points=(endpoints.cassandra_host,),
        port=endpoints.cassandra_port,
        keyspace=f"kjbench_{uuid.uuid4().hex[:10]}",
    )
    session = connect(cassandra)
    try:
        migrate(session, cassandra)
        try:
            yield session, cassandra
        finally:
            session.execute(f"DROP KEYSPACE IF EXISTS {cassandra.keyspace}")
    finally:
        session.cluster.shutdown()


def dev_reader_settings(bootstrap: str) -> dict[str, str]:
    """A reader on kjournal-dev's Kafka and Cassandra (the `journal` keyspace `scripts/dev up`
    creates; KJOURNAL_DEV_CASSANDRA_PORT, default 9042)."""
    return {
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": "127.0.0.1",
        "KJOURNAL_CASSANDRA__PORT": os.environ.get("KJOURNAL_DEV_CASSANDRA_PORT", "9042"),
        "KJOURNAL_CASSANDRA__KEYSPACE": "journal",
    }


@contextmanager
def writers_reader(
    bootstrap: str, log_dir: Path, settings: dict[str, str] | None = None
) -> Iterator[tuple[dict[str, str], int]]:
    """A reader process for the benchmark's writers, which ask it each append's outcome before
    they answer: yields the writer settings that link to it, and its process id."""
    reader_env = {**dev_reader_settings(bootstrap), **(settings or {})}
    with service_process("kjournal_reader", reader_env, log_dir) as (url, pid):
        yield {"KJOURNAL_READER__URL": url}, pid
