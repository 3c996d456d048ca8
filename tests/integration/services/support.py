"""Running the real writer and reader as processes on 127.0.0.1, and looking at Kafka directly."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _clean_env() -> dict[str, str]:
    """This process's environment without any KJOURNAL_* service setting (the tests set them)."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("KJOURNAL_") or name.startswith(("KJOURNAL_DEV_", "KJOURNAL_TEST_"))
    }


@dataclass
class RunningService:
    module: str
    url: str
    process: subprocess.Popen[bytes]
    log_file: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def status_kib(self, field: str) -> int:
        """A /proc/<pid>/status memory field (VmRSS, VmHWM = peak RSS) in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} for pid {self.pid}")

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")

    def stop(self, timeout_s: float = 30.0) -> bool:
        """SIGTERM, then wait; True if it shut down gracefully. (uvicorn re-raises the signal
        once shut down, so a graceful exit still reports SIGTERM.)"""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        graceful = self.process.returncode in (0, -signal.SIGTERM)
        return graceful and "Application shutdown complete" in self.log()


def start_service(
    module: str,
    settings: dict[str, str],
    log_dir: Path,
    *,
    ready_path: str = "/healthz",
    timeout_s: float = 60.0,
    port: int | None = None,
) -> RunningService:
    """`python -m <module>` with `settings` (KJOURNAL_* variables) on a free loopback port (another
    one if something took that port before the service bound it), or on `port` (a restart of a
    service its clients know the address of)."""
    if port is not None:
        return _start_service(module, settings, log_dir, ready_path, timeout_s, port)
    for _ in range(BIND_ATTEMPTS - 1):
        try:
            return _start_service(module, settings, log_dir, ready_path, timeout_s)
        except _PortTaken:
            continue
    return _start_service(module, settings, log_dir, ready_path, timeout_s)


BIND_ATTEMPTS = 3


class _PortTaken(AssertionError):
    pass


def _start_service(
    module: str,
    settings: dict[str, str],
    log_dir: Path,
    ready_path: str,
    timeout_s: float,
    port: int | None = None,
) -> RunningService:
    port = port or free_port()
    env = _clean_env()
    env.update(
        {
            "KJOURNAL_HTTP__HOST": "127.0.0.1",
            "KJOURNAL_HTTP__PORT": str(port),
            "KJOURNAL_HTTP__LOG_FORMAT": "text",
        }
    )
    env.update(settings)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / f"{module}-{port}-{time.monotonic_ns()}.log"
    with log_file.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", module],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    service = RunningService(module, f"http://127.0.0.1:{port}", process, log_file)
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            output = service.log()
            error = _PortTaken if "address already in use" in output else AssertionError
            raise error(f"{module} exited with {process.returncode}:\n{output}")
        try:
            if httpx.get(service.url + ready_path, timeout=2).status_code == 200:
                return service
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            service.stop()
            raise AssertionError(f"{module} not ready within {timeout_s} s:\n{service.log()}")
        time.sleep(0.1)


async def _wait_for_topic(bootstrap: str, topic: str, timeout_s: float) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            described = await admin.describe_topics([topic])
            partitions = described[0].get("partitions") or [] if described else []
            if partitions and all(p.get("leader", -1) >= 0 for p in partitions):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"topic {topic} has no leaders after {timeout_s} s")
            await asyncio.sleep(0.05)
    finally:
        await admin.close()


def wait_for_topic(bootstrap: str, topic: str, timeout_s: float = 30.0) -> str:
    """Block until every partition of a just-created topic has a leader (creation is async)."""
    asyncio.run(_wait_for_topic(bootstrap, topic, timeout_s))
    return topic


async def _end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics([topic])
    finally:
        await admin.close()
    partitions = [p["partition"] for p in (described[0].get("partitions") or [])]
    if not partitions:
        return {}
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        return {tp.partition: int(offset) for tp, offset in ends.items()}
    finally:
        await consumer.stop()


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """The topic's end offset per partition (0 everywhere: nothing was ever produced)."""
    return asyncio.run(_end_offsets(bootstrap, topic))


def topic_counters(http: httpx.Client, url: str, topic: str, *names: str) -> dict[str, float]:
    """Counters `names` of `topic` in one read of the /metrics of the service at `url` (0 while
    absent)."""
    text = http.get(f"{url}/metrics").text
    counters = {}
    for name in names:
        pattern = rf'^{re.escape(name)}\{{[^}}]*topic="{re.escape(topic)}"[^}}]*\}} (\S+)$'
        found = re.search(pattern, text, re.MULTILINE)
        counters[name] = float(found.group(1)) if found else 0.0
    return counters


def produce_events(bootstrap: str, key: Key, last: int) -> None:
    """Events 1 to `last` of `key` (payload `{"n": n, "variant": 0}`) straight into Kafka, as a
    writer of another process (or the Scala library) would: no writer asks the reader about them."""

    async def produce() -> None:
        async with Journals(KafkaSettings(bootstrap_servers=bootstrap)) as journals:
            events = [
                Event(SeqNr(n), payload=JsonPayload({"n": n, "variant": 0}))
                for n in range(1, last + 1)
            ]
            await journals.journal(key).produce(events)

    asyncio.run(produce())
