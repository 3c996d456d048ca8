"""Helpers for the Spark replicator tests: topics, the job as a subprocess, reading Cassandra."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TypeVar

from cassandra.cluster import Session
from kjournal.cassandra.reader import CassandraEventualReader
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.replay import end_offsets

from tests.integration.spark.model import Model
from tests.integration.spark.model import append
from tests.support.platform import cassandra_env
from tests.support.platform import kafka_env

PARTITIONS = 4
T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def replicator_env(
    platform: Endpoints, keyspace: str, pattern: str, checkpoint: Path, **extra: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KJOURNAL_")}
    env.update(
        {
            **kafka_env(platform),
            **cassandra_env(platform, keyspace),
            "KJOURNAL_TOPICS__PATTERN": pattern,
            "KJOURNAL_SPARK__CHECKPOINT_LOCATION": str(checkpoint),
            "KJOURNAL_SPARK__JARS_DIR": str(platform.spark_kafka_jars),
            "KJOURNAL_SPARK__TRIGGER_INTERVAL_S": "0.2",
            "KJOURNAL_HTTP__HOST": "127.0.0.1",
            "KJOURNAL_HTTP__PORT": str(free_port()),
            "KJOURNAL_HTTP__LAG_INTERVAL_S": "1",
        }
    )
    env.update(extra)
    return env


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the test process dies, even without cleanup
    (a pytest killed by a timeout), so no replicator outlives its test. The JVM and the Python
    workers follow the driver (they watch their stdin)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1


class ReplicatorProcess:
    """`python -m kjournal_replicator` in its own process group (the JVM and workers included)."""

    def __init__(self, env: Mapping[str, str], log: Path) -> None:
        self.env = dict(env)
        self.log = log
        self.port = int(env["KJOURNAL_HTTP__PORT"])
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kjournal_replicator"],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def health(self) -> dict[str, object]:
        return dict(json.loads(self.get("/healthz")[1]))

    def terminate(self, timeout: float = 120) -> int:
        """SIGTERM to the driver only, as Kubernetes sends it to a pod's main process."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        """SIGKILL to the whole group: driver, JVM and Python workers die at once."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)
        with contextlib.suppress(ProcessLookupError):  # stragglers of the group, if any
            os.killpg(self.process.pid, signal.SIGKILL)


def wait_until(
    condition: Callable[[], bool], timeout: float, what: str, process: ReplicatorProcess | None
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and not process.alive():
            raise AssertionError(
                f"replicator exited while waiting for {what}:\n{process.output()[-4000:]}"
            )
        if time.monotonic() > deadline:
            tail = process.output()[-4000:] if process is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{tail}")
        time.sleep(0.3)


@contextmanager
def running_replicator(
    env: Mapping[str, str], log: Path, start_timeout_s: float
) -> Iterator[ReplicatorProcess]:
    """A replicator whose query is running; stopped (killed if it will not stop) afterwards."""
    process = ReplicatorProcess(env, log)

    def started() -> bool:
        try:
            return process.health().get("query") == "active"
        except OSError:
            return False

    try:
        wait_until(started, start_timeout_s, "the replication query to start", process)
        yield process
    finally:
        if process.alive():
            try:
                process.terminate(60)
            except Exception:
                process.kill()


@contextmanager
def replicator_run(
    env: Mapping[str, str], log: Path, *, kill: bool = False
) -> Iterator[ReplicatorProcess]:
    """A replicator for the with block. At the block's end it is stopped as Kubernetes stops a
    pod, with SIGTERM, and must exit 0; with `kill`, SIGKILLed instead (a crash). Killed in any
    case if the block fails."""
    process = ReplicatorProcess(env, log)
    try:
        yield process
        if not kill:
            assert process.terminate() == 0, process.output()[-4000:]
    finally:
        process.kill()


def journals_at(bootstrap: str) -> Journals:
    """Journals writing to the broker at `bootstrap` (open with `async with`)."""
    return Journals(KafkaSettings(bootstrap_servers=bootstrap))


def pointers(session: Session, keyspace: str, topic: str) -> dict[int, int | None]:
    store = CassandraReplicatedStore(session, TableNames(keyspace=keyspace))
    return {p: store.pointer2(topic, p) for p in range(PARTITIONS)}


def caught_up(bootstrap: str, session: Session, keyspace: str, topic: str) -> Callable[[], bool]:
    """Whether pointer2 covers every record Kafka holds for the topic (checked each call)."""

    def check() -> bool:
        ends = asyncio.run(end_offsets(bootstrap, topic, PARTITIONS))
        current = pointers(session, keyspace, topic)
        return all(
            end == 0 or (current[p] is not None and current[p] == end - 1)
            for p, end in ends.items()
        )

    return check


async def stored_events(
    session: Session, keyspace: str, topic: str, ids: list[str]
) -> dict[str, list[Event]]:
    """Each journal's events as the eventual store returns them (seqNr duplicates fail)."""
    reader = await CassandraEventualReader.create(session, TableNames(keyspace=keyspace))
    stored: dict[str, list[Event]] = {}
    for id in ids:
        key = Key(topic, id)
        head = await reader.head(key)
        if head is None:
            stored[id] = []
            continue
        stored[id] = [record.event async for record in reader.events(key, head, SeqNr(1))]
    return stored


@dataclass
class SparkTopic:
    """A fresh topic of the module's pattern, the model of what Cassandra must hold of it once
    replicated, and the platform and keyspace the tests' replicators copy it between."""

    name: str
    platform: Endpoints
    session: Session
    keyspace: str
    model: Model = field(init=False)

    def __post_init__(self) -> None:
        self.model = Model(self.name)

    @property
    def bootstrap(self) -> str:
        return self.platform.kafka_bootstrap

    def write(self, act: Callable[[Journals], Awaitable[T]]) -> T:
        """`act` on journals writing to the platform's Kafka (to keep the model right, through
        tests/integration/spark/model.py's actions)."""

        async def run() -> T:
            async with journals_at(self.bootstrap) as journals:
                return await act(journals)

        return asyncio.run(run())

    def append(self, ids: list[str], events: int) -> None:
        """An append of `events` events to each journal of `ids`, one after the other."""

        async def each(journals: Journals) -> None:
            for id in ids:
                await append(journals, self.model, id, events)

        self.write(each)

    def env(self, checkpoint: Path, pattern: str | None = None, **extra: str) -> dict[str, str]:
        """A replicator's variables: this topic alone (or `pattern`), from `checkpoint`."""
        return replicator_env(
            self.platform, self.keyspace, pattern or re.escape(self.name), checkpoint, **extra
        )

    def caught_up(self) -> Callable[[], bool]:
        return caught_up(self.bootstrap, self.session, self.keyspace, self.name)

    def wait_caught_up(self, timeout: float, what: str, process: ReplicatorProcess) -> None:
        wait_until(self.caught_up(), timeout, what, process)

    def store(self) -> CassandraReplicatedStore:
        return CassandraReplicatedStore(self.session, TableNames(keyspace=self.keyspace))

    def pointers(self) -> dict[int, int | None]:
        return pointers(self.session, self.keyspace, self.name)

    def stored(self, ids: list[str]) -> dict[str, list[Event]]:
        return asyncio.run(stored_events(self.session, self.keyspace, self.name, ids))
