"""The fault suite's own platform: Kafka, Cassandra, the writer, reader and replicator on free
loopback ports with their own state directory, and the faults (SIGKILL, SIGSTOP) done to them.

It is never a developer's running `kjournal-dev up` platform: killing that broker would be rude.
Whatever is killed comes back through `Platform.up`, the same restart `scripts/dev up` does.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.platform.state import PlatformState
from kjournal_dev.process import is_running

from tests.support.platform import OwnPlatform
from tests.support.platform import own_platform_config

KAFKA, CASSANDRA, WRITER, READER, REPLICATOR = (
    "kafka",
    "cassandra",
    "writer",
    "reader",
    "replicator",
)
TOPIC = "journal_faults"
DOOMED_TOPIC = "journal_faults_doomed"  # deleted by one scenario while the replicator runs


def fault_config(state_dir: Path) -> DevConfig:
    """The fault suite's own ports, state, topics and keyspace."""
    return own_platform_config(
        state_dir, topics=(TOPIC, DOOMED_TOPIC), partitions=4, keyspace="journal_faults"
    )


class FaultPlatform(OwnPlatform):
    def _state(self) -> PlatformState:
        state = PlatformState.load(self.config.state_file)
        assert state is not None, "the fault platform is not up"
        return state

    def pid(self, name: str) -> int:
        return self._state().components[name].pid

    def restarts(self, name: str) -> int:
        return self._state().components[name].restarts

    def all_restarts(self) -> dict[str, int]:
        return {name: c.restarts for name, c in self._state().components.items()}

    def log(self, name: str) -> Path:
        return Path(self._state().components[name].log_file)

    def running(self, name: str) -> bool:
        component = self._state().components[name]
        return is_running(component.pid, component.marker)

    def kill(self, name: str) -> None:
        """SIGKILL the component's whole process group (the replicator's JVM with its driver),
        as a node or pod dies: no shutdown hook runs."""
        pid = self.pid(name)
        os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while is_running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not is_running(pid), f"{name} (pid {pid}) survived SIGKILL"

    @contextmanager
    def frozen(self, name: str) -> Iterator[None]:
        """SIGSTOP the component for the block (a stalled node: connections open, no answers)."""
        pid = self.pid(name)
        os.killpg(pid, signal.SIGSTOP)
        try:
            _wait_until_stopped(pid)
            yield
        finally:
            os.killpg(pid, signal.SIGCONT)

    def restart(self) -> None:
        """`kjournal-dev up`: whatever died comes back on its data; waits until all answer."""
        self.endpoints = self.platform.up(with_services=True)

    def checkpoint(self) -> Path:
        return Path(self.endpoints.data_dir) / REPLICATOR / "checkpoint"

    def forget_checkpoint(self) -> None:
        shutil.rmtree(self.checkpoint(), ignore_errors=True)


def _wait_until_stopped(group: int, timeout_s: float = 10.0) -> None:
    """Until every thread of process group `group` is stopped. SIGSTOP takes a thread when it is
    next scheduled: for up to ~15 ms on the 2-core box a busy JVM still answers (a Kafka broker
    acknowledged a record sent after `killpg` had returned)."""
    deadline = time.monotonic() + timeout_s
    while True:
        states = _thread_states(group)
        if states and all(state in "tTZX" for state in states):
            return
        assert time.monotonic() < deadline, f"process group {group} not stopped: {states}"
        time.sleep(0.005)


def _thread_states(group: int) -> list[str]:
    """The scheduler state (R, S, T, ...) of every thread of every process in `group`."""
    states: list[str] = []
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            # after the command's closing parenthesis: state, ppid, pgrp, ...
            if int((process / "stat").read_text().rsplit(")", 1)[1].split()[2]) != group:
                continue
            for thread in (process / "task").iterdir():
                states.append((thread / "stat").read_text().rsplit(")", 1)[1].split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited meanwhile
    return states
