"""A replicator (`python -m kjournal_replicator`, Spark local mode) of one topic for a bench:
its settings, and a block that runs it and stops it whatever happens."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev.platform.lifecycle import Endpoints

from bench._http import free_port


@dataclass(frozen=True)
class ReplicatorTarget:
    """What one bench replicator copies, from where to where."""

    bootstrap: str
    cassandra_host: str
    cassandra_port: int
    keyspace: str
    topic: str
    spark_jars: Path  # the Spark Kafka source's jars (kjournal-dev's Endpoints.spark_kafka_jars)

    @classmethod
    def on(cls, endpoints: Endpoints, keyspace: str, topic: str) -> ReplicatorTarget:
        """`topic` into `keyspace` of the local platform's Kafka and Cassandra."""
        return cls(
            endpoints.kafka_bootstrap,
            endpoints.cassandra_host,
            endpoints.cassandra_port,
            keyspace,
            topic,
            endpoints.spark_kafka_jars,
        )


def target_env(target: ReplicatorTarget) -> dict[str, str]:
    """The KJOURNAL_* settings that name `target`: exactly its topic, its keyspace, the jars."""
    return {
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": target.bootstrap,
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": target.cassandra_host,
        "KJOURNAL_CASSANDRA__PORT": str(target.cassandra_port),
        "KJOURNAL_CASSANDRA__KEYSPACE": target.keyspace,
        "KJOURNAL_TOPICS__PATTERN": re.escape(target.topic),
        "KJOURNAL_SPARK__JARS_DIR": str(target.spark_jars),
    }


def replicator_env(
    target: ReplicatorTarget, folder: Path, http_port: int, master: str = "local[2]"
) -> dict[str, str]:
    """The replicator's KJOURNAL_* settings: `target_env`, its checkpoint in `folder`."""
    return {
        **target_env(target),
        "KJOURNAL_SPARK__MASTER": master,
        "KJOURNAL_SPARK__CHECKPOINT_LOCATION": str(folder / "checkpoint"),
        "KJOURNAL_HTTP__HOST": "127.0.0.1",
        "KJOURNAL_HTTP__PORT": str(http_port),
    }


@dataclass
class RunningReplicator:
    process: subprocess.Popen[bytes]
    log: Path

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise SystemExit(
                f"the replicator exited with {self.process.returncode}; see {self.log}"
            )

    def stop(self) -> int:
        """SIGTERM (the replicator stops its query and Spark), SIGKILL after two minutes; then
        whatever is left of its process group (a Spark JVM) is killed. Its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # nothing left
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.returncode


@contextmanager
def replicator(
    target: ReplicatorTarget, folder: Path, settings: dict[str, str] | None = None
) -> Iterator[RunningReplicator]:
    """Run a replicator of `target` (in its own process group, log in `folder`) until the block
    ends or `stop()` is called."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KJOURNAL_")}
    env.update(replicator_env(target, folder, free_port()))
    env.update(settings or {})
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "replicator.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kjournal_replicator"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = RunningReplicator(process, log)
    try:
        yield running
    finally:
        running.stop()
