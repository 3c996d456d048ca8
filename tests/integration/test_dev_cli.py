"""`kjournal-dev` end to end: its lifecycle on spare ports, and one clear line for each bad situation."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from kjournal_dev.config import DevConfig
from kjournal_dev.process import is_running
from kjournal_dev.process import port_is_free


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        KJOURNAL_DEV_STATE_DIR=str(tmp_path / "state"),
        KJOURNAL_DEV_KAFKA_PORT=str(_free_port()),
        KJOURNAL_DEV_KAFKA_CONTROLLER_PORT=str(_free_port()),
        KJOURNAL_DEV_CASSANDRA_PORT=str(_free_port()),
        KJOURNAL_DEV_CASSANDRA_STORAGE_PORT=str(_free_port()),
        KJOURNAL_DEV_WRITER_PORT=str(_free_port()),
        KJOURNAL_DEV_READER_PORT=str(_free_port()),
        KJOURNAL_DEV_REPLICATOR_PORT=str(_free_port()),
        KJOURNAL_DEV_OTLP_GRPC_PORT=str(_free_port()),
        KJOURNAL_DEV_OTLP_HTTP_PORT=str(_free_port()),
    )
    env.update(overrides)
    return env


def _cli(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kjournal_dev.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _one_clear_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kjournal-dev: error: ")
    return lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_taken_port_is_named_with_the_setting_to_change(tmp_path: Path, taken_port: int):
    result = _cli(_env(tmp_path, KJOURNAL_DEV_CASSANDRA_PORT=str(taken_port)), "up")

    line = _one_clear_line(result)
    assert f"port {taken_port}" in line
    assert "Cassandra CQL" in line
    assert "KJOURNAL_DEV_CASSANDRA_PORT" in line


def test_an_unreachable_maven_repository_is_one_line(tmp_path: Path):
    env = _env(
        tmp_path,
        KJOURNAL_DEV_BUILD_CACHE=str(tmp_path / "empty-cache"),
        KJOURNAL_DEV_MAVEN_REPO=f"http://127.0.0.1:{_free_port()}/maven2",
    )

    line = _one_clear_line(_cli(env, "up"))

    assert "cannot reach http://127.0.0.1:" in line
    assert not list((tmp_path / "empty-cache" / "jars").glob("*/.complete"))


def test_a_java_other_than_17_is_refused(tmp_path: Path):
    fake = tmp_path / "bin"
    fake.mkdir()
    java = fake / "java"
    java.write_text(
        "#!/bin/sh\n"
        "echo 'Property settings:' >&2\n"
        "echo '    java.specification.version = 21' >&2\n"
        "echo 'openjdk version \"21.0.4\" 2024-07-16' >&2\n"
    )
    java.chmod(0o755)
    env = _env(tmp_path, PATH=f"{fake}:{os.environ['PATH']}")
    env.pop("JAVA_HOME", None)
    env.pop("KJOURNAL_DEV_JAVA", None)

    line = _one_clear_line(_cli(env, "up"))

    assert "needs Java 17" in line
    assert "Java 21" in line
    assert str(java) in line


@pytest.mark.kafka
@pytest.mark.cassandra
def test_up_runs_the_whole_system_end_to_end_and_down_leaves_nothing_behind(tmp_path: Path):
    """The README's run command on spare ports: Kafka, Cassandra, writer, reader and the Spark
    replicator come up; an HTTP append travels Kafka → Spark → Cassandra and the HTTP read then
    serves it from Cassandra alone (nothing left in the Kafka tail); `down` cleans up."""
    env = _env(tmp_path, KJOURNAL_DEV_CASSANDRA_HEAP_MB="512", KJOURNAL_DEV_PARTITIONS="2")
    config = DevConfig.from_env(env)
    ports = [
        config.kafka_port,
        config.kafka_controller_port,
        config.cassandra_port,
        config.cassandra_storage_port,
        config.writer_port,
        config.reader_port,
        config.replicator_port,
        config.otlp_grpc_port,
        config.otlp_http_port,
    ]
    try:
        up = _cli(env, "up")
        assert up.returncode == 0, up.stderr + up.stdout
        assert "platform started" in up.stdout
        assert f"writer            http://127.0.0.1:{config.writer_port}" in up.stdout
        assert f"reader            http://127.0.0.1:{config.reader_port}" in up.stdout
        assert f"replicator        http://127.0.0.1:{config.replicator_port}" in up.stdout

        again = _cli(env, "up")
        assert again.returncode == 0, again.stderr
        assert "already running (reused)" in again.stdout

        status = _cli(env, "status")
        assert status.returncode == 0, status.stdout
        lines = status.stdout.splitlines()
        assert [line.split()[:2] for line in lines] == [
            ["kafka", "healthy"],
            ["cassandra", "healthy"],
            ["collector", "healthy"],
            ["writer", "healthy"],
            ["reader", "healthy"],
            ["replicator", "healthy"],
        ]
        pids = [int(line.split()[3]) for line in lines]

        _append_replicate_and_read_over_http(config)
        _the_append_was_traced(env)
    finally:
        down = _cli(env, "down")
    assert down.returncode == 0, down.stderr
    assert not any(is_running(pid) for pid in pids)
    assert all(port_is_free("127.0.0.1", port) for port in ports)
    assert _cli(env, "status").returncode == 1


def _the_append_was_traced(env: dict[str, str]) -> None:
    """The services sent their spans to the collector `up` started; `trace` prints them."""
    deadline = time.monotonic() + 60
    while True:
        listed = _cli(env, "trace", "--last", "100000")
        assert listed.returncode == 0, listed.stderr
        appends = [line for line in listed.stdout.splitlines() if "writer     POST" in line]
        if appends or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert appends, listed.stdout
    waterfall = _cli(env, "trace", appends[-1].split()[0])
    assert waterfall.returncode == 0, waterfall.stderr
    assert "send journal [producer]" in waterfall.stdout


def _append_replicate_and_read_over_http(config: DevConfig) -> None:
    writer = f"http://127.0.0.1:{config.writer_port}/v1/journals/journal/e2e-1"
    reader = f"http://127.0.0.1:{config.reader_port}/v1/journals/journal/e2e-1"
    body = {"events": [{"seqNr": n, "payload": {"n": n}} for n in (1, 2, 3)]}
    appended = httpx.post(f"{writer}/events", json=body, timeout=30)
    assert appended.status_code == 201, appended.text
    assert (appended.json()["from"], appended.json()["to"]) == (1, 3)

    deadline = time.monotonic() + 180
    while True:  # the replicator catches up: this journal has nothing left only in Kafka
        head = httpx.get(reader, timeout=30).json()
        if head["unreplicatedActions"] == 0 and head["pointer2"] is not None:
            break
        assert time.monotonic() < deadline, f"not replicated in time: {head}"
        time.sleep(0.5)
    assert head["seqNr"] == 3

    lines = httpx.get(f"{reader}/events", timeout=30).text.splitlines()
    events = [json.loads(line) for line in lines]
    assert [(e["seqNr"], e["payload"]) for e in events] == [
        (1, {"n": 1}),
        (2, {"n": 2}),
        (3, {"n": 3}),
    ]
