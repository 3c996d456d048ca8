"""A real single-node KRaft Kafka broker (combined broker + controller) on loopback."""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import subprocess
import uuid
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.java import Java
from kjournal_dev.process import spawn
from kjournal_dev.process import tail

_LOG4J2 = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders><Console name="out" target="SYSTEM_OUT">
    <PatternLayout pattern="[%d] %p %m (%c)%n"/></Console></Appenders>
  <Loggers>
    <Logger name="kafka" level="INFO"/><Logger name="org.apache.kafka" level="INFO"/>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="out"/></Root>
  </Loggers>
</Configuration>
"""


def _cluster_id() -> str:
    while True:
        candidate = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not candidate.startswith("-"):
            return candidate


def server_properties(
    config: DevConfig, log_dir: Path, overrides: Mapping[str, str] | None = None
) -> str:
    host, port, cport = config.host, config.kafka_port, config.kafka_controller_port
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{host}:{cport}",
        "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
        "advertised.listeners": f"PLAINTEXT://{host}:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "log.retention.hours": "24",
        "delete.topic.enable": "true",
        **(overrides or {}),
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def start(
    config: DevConfig,
    java: Java,
    jars: Path,
    data_dir: Path,
    overrides: Mapping[str, str] | None = None,
    format_arguments: Sequence[str] = (),
) -> tuple[int, Path]:
    """Start the broker on its storage, formatting it first if it never was; returns (pid, log
    file). Does not wait. A restart keeps the storage and its cluster id, and appends to the log.
    `overrides` change server.properties (the secured broker's listeners; the file is then
    readable by its owner only), `format_arguments` are added when formatting (SCRAM users)."""
    home = data_dir / "kafka"
    home.mkdir(parents=True, exist_ok=True)
    properties = home / "server.properties"
    properties.touch(mode=0o600)
    properties.chmod(0o600)
    properties.write_text(server_properties(config, home / "data", overrides))
    (home / "log4j2.xml").write_text(_LOG4J2)
    classpath = f"{jars}/*"
    log_file = home / "kafka.log"
    if not (home / "data" / "meta.properties").exists():
        _format(java, classpath, properties, home / "format.log", format_arguments)
    pid = spawn(
        [
            java.executable,
            f"-Xms{config.kafka_heap_mb}m",
            f"-Xmx{config.kafka_heap_mb}m",
            "-XX:+UseG1GC",
            f"-Dlog4j2.configurationFile=file:{home / 'log4j2.xml'}",
            f"-Dkjournal.dev.home={home}",
            "-cp",
            classpath,
            "kafka.Kafka",
            str(properties),
        ],
        log_file=log_file,
        cwd=home,
    )
    return pid, log_file


def _format(
    java: Java, classpath: str, properties: Path, log_file: Path, arguments: Sequence[str]
) -> None:
    """Format new storage with a new cluster id; the tool's output goes to `log_file` (without
    the SCRAM credential records it echoes)."""
    fmt = subprocess.run(
        [
            java.executable,
            "-cp",
            classpath,
            "kafka.tools.StorageTool",
            "format",
            "-t",
            _cluster_id(),
            "-c",
            str(properties),
            "--ignore-formatted",
            *arguments,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    output = re.sub(
        r"UserScramCredentialRecord\([^)]*\)",
        "UserScramCredentialRecord(...)",
        fmt.stdout + fmt.stderr,
    )
    log_file.write_text(output)
    if fmt.returncode != 0:
        raise DevError(f"formatting Kafka storage failed; see {log_file}")


async def _describe(bootstrap: str, options: Mapping[str, Any]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, **options)
    await admin.start()
    try:
        await admin.describe_cluster()
    finally:
        await admin.close()


async def probe(bootstrap: str, options: Mapping[str, Any] | None = None) -> bool:
    """True if the broker answers a metadata request (`options`: aiokafka's, e.g. SASL)."""
    client_log = logging.getLogger("aiokafka")
    level = client_log.level
    client_log.setLevel(logging.CRITICAL)  # "Unable connect" is expected while it starts
    try:
        await asyncio.wait_for(_describe(bootstrap, options or {}), timeout=10)
    except (TimeoutError, KafkaError, OSError):
        return False
    finally:
        client_log.setLevel(level)
    return True


def log_tail(log_file: Path) -> str:
    return tail(log_file)
