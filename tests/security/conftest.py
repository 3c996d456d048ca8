"""The secured platform the security tests run against: Kafka with SCRAM users and ACLs,
Cassandra with roles, the writer, reader and replicator with their own credentials and HTTP
authentication, on free loopback ports with a state directory of its own. Started once for the
package (`kjournal-dev up --secure` does the same for a developer) and taken down after it."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Endpoints, Platform
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.tokens import DevIssuer

from tests.support.reports import add_session_report

TOPIC = "journal_sec"
KEYSPACE = "journal_sec"


def _free_ports(count: int) -> list[int]:
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]


def secure_config(state_dir: Path) -> DevConfig:
    """The developer's KJOURNAL_DEV_* settings (cache, Java, heaps) with the suite's own ports,
    state, topic and keyspace, secured."""
    kafka, controller, tls, cql, storage, writer, reader, replicator, grpc, otlp = _free_ports(10)
    return DevConfig.from_env().model_copy(
        update={
            "state_dir": state_dir,
            "kafka_port": kafka,
            "kafka_controller_port": controller,
            "kafka_tls_port": tls,
            "cassandra_port": cql,
            "cassandra_storage_port": storage,
            "writer_port": writer,
            "reader_port": reader,
            "replicator_port": replicator,
            "otlp_grpc_port": grpc,
            "otlp_http_port": otlp,
            "topics": (TOPIC,),
            "partitions": 4,
            "keyspace": KEYSPACE,
            "secure": True,
        }
    )


@dataclass
class SecuredPlatform:
    platform: Platform
    endpoints: Endpoints
    credentials: Credentials
    issuer: DevIssuer

    @property
    def config(self) -> DevConfig:
        return self.platform.config

    def url(self, service: str) -> str:
        return self.endpoints.services[service]


@pytest.fixture(scope="package")
def secured(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[SecuredPlatform]:
    platform = Platform(secure_config(tmp_path_factory.mktemp("secured-state")))
    try:
        endpoints = platform.up(with_services=True)
        credentials = Credentials.load(platform.config.credentials_file)
        assert credentials is not None
        yield SecuredPlatform(platform, endpoints, credentials, DevIssuer(platform.config.auth_dir))
    finally:
        kept = platform.config.cache_dir / "test-logs" / "security"  # outlives pytest's tmp dirs
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        for component in platform.status():
            if component.log_file != "-":
                shutil.copy(component.log_file, kept / Path(component.log_file).name)
        add_session_report(pytestconfig, "secured platform logs", f"every component's log: {kept}")
        platform.down()
