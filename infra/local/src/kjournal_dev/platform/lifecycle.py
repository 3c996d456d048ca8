"""Bring the local platform up, report on it and take it down: the logic behind the CLI."""

from __future__ import annotations

import asyncio
import functools
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from pathlib import Path
from threading import Event
from typing import Any

from kjournal_dev.artifacts import maven
from kjournal_dev.artifacts.collector import ensure_collector
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.java import Java
from kjournal_dev.java import find_java
from kjournal_dev.platform import cassandra_node
from kjournal_dev.platform import collector
from kjournal_dev.platform import kafka_node
from kjournal_dev.platform import services
from kjournal_dev.platform import topics
from kjournal_dev.platform.schema import apply_schema
from kjournal_dev.platform.state import ComponentState
from kjournal_dev.platform.state import PlatformState
from kjournal_dev.process import how_it_ended
from kjournal_dev.process import is_running
from kjournal_dev.process import require_free_ports
from kjournal_dev.process import stop
from kjournal_dev.process import tail
from kjournal_dev.process import wait_ports_free
from kjournal_dev.security import cassandra as cassandra_security
from kjournal_dev.security import kafka as kafka_security
from kjournal_dev.security.credentials import CASSANDRA_ADMIN
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.tls import LoopbackTls

KAFKA = "kafka"
CASSANDRA = "cassandra"
COLLECTOR = "collector"
INFRASTRUCTURE = (KAFKA, CASSANDRA, COLLECTOR)  # what `up` starts before the services

Reporter = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class Endpoints:
    """How to reach what `up` started."""

    kafka_bootstrap: str
    cassandra_host: str
    cassandra_port: int
    keyspace: str
    topics: tuple[str, ...]
    spark_kafka_jars: Path
    data_dir: Path
    started: bool
    services: dict[str, str] = field(default_factory=dict)  # name → base URL
    otlp_endpoint: str | None = None  # the collector's OTLP/HTTP address, if it runs
    spans_dir: Path | None = None  # where the collector writes spans


@dataclass(frozen=True)
class ComponentStatus:
    name: str
    pid: int | None
    address: str
    running: bool
    healthy: bool
    detail: str
    log_file: str


class Platform:
    def __init__(self, config: DevConfig) -> None:
        self.config = config
        state = self._state()
        if state is not None and state.secure and not config.secure:
            # A secured platform stays secured until `down`, whatever a later `up` is told.
            self.config = config.model_copy(update={"secure": True})

    def _credentials(self) -> Credentials | None:
        if not self.config.secure:
            return None
        return Credentials.load_or_generate(self.config.credentials_file)

    def _kafka_options(self) -> dict[str, Any]:
        """aiokafka options of the platform tool's own Kafka clients (admin when secured)."""
        credentials = self._credentials()
        return {} if credentials is None else kafka_security.admin_options(credentials)

    def _cassandra_logins(self) -> list[tuple[str, str]]:
        credentials = self._credentials()
        if credentials is None:
            return []
        admin = (CASSANDRA_ADMIN, credentials.cassandra[CASSANDRA_ADMIN])
        return [admin, cassandra_security.DEFAULT_SUPERUSER]

    def _state(self) -> PlatformState | None:
        return PlatformState.load(self.config.state_file)

    def _running(self, state: PlatformState | None, name: str) -> bool:
        component = state.components.get(name) if state else None
        return component is not None and is_running(component.pid, component.marker)

    def up(self, report: Reporter = _quiet, with_services: bool = True) -> Endpoints:
        """Start whatever is not running yet, wait until it answers, create topics and schema,
        then (unless `with_services` is false) the writer and reader services."""
        state = self._open_state()
        credentials = self._credentials()
        nodes = [n for n in (KAFKA, CASSANDRA) if not self._running(state, n)]
        collector_missing = self.config.collector and not self._running(state, COLLECTOR)
        data_dir = Path(state.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        java = find_java(self.config.java) if nodes else None
        self._require_free_ports(nodes, collector_missing)
        spark_jars = self._fetch(report)
        if collector_missing:
            self._start_collector(state, data_dir, report)
        if java is not None:
            self._start_nodes(state, nodes, java, data_dir, credentials, report)
        self._wait_infrastructure(state, report)
        self._ensure_topics(report)
        self._ensure_schema(credentials, data_dir, report)
        urls = self._up_services(state, data_dir, report) if with_services else {}
        return self._endpoints(data_dir, spark_jars, started=bool(nodes), services=urls)

    def _open_state(self) -> PlatformState:
        """The running platform's state, or a new one (with a new data directory)."""
        state = self._state()
        if state is None or not Path(state.data_dir).is_dir():
            # A new platform (or one whose data is gone, with a reboot's temporary files).
            if state is not None:
                self._forget(state)
            return PlatformState(
                data_dir=tempfile.mkdtemp(prefix="kjournal-dev-"), secure=self.config.secure
            )
        if self.config.secure and not state.secure:
            raise DevError(
                "the running platform is not secured: stop it with `scripts/dev down`, then "
                "`scripts/dev up --secure`"
            )
        return state

    def _require_free_ports(self, nodes: list[str], collector_missing: bool) -> None:
        """The ports of what is about to start are free (else DevError naming their variables)."""
        config = self.config
        if nodes:
            ports: dict[str, tuple[int, str]] = {}
            if KAFKA in nodes:
                ports["Kafka broker"] = (config.kafka_port, "KJOURNAL_DEV_KAFKA_PORT")
                if config.secure:
                    ports["Kafka TLS listener"] = (
                        config.kafka_tls_port,
                        "KJOURNAL_DEV_KAFKA_TLS_PORT",
                    )
                ports["Kafka controller"] = (
                    config.kafka_controller_port,
                    "KJOURNAL_DEV_KAFKA_CONTROLLER_PORT",
                )
            if CASSANDRA in nodes:
                ports["Cassandra CQL"] = (config.cassandra_port, "KJOURNAL_DEV_CASSANDRA_PORT")
                ports["Cassandra storage"] = (
                    config.cassandra_storage_port,
                    "KJOURNAL_DEV_CASSANDRA_STORAGE_PORT",
                )
            require_free_ports(config.host, ports)
        if collector_missing:
            require_free_ports(
                config.host,
                {
                    "OTLP/gRPC": (config.otlp_grpc_port, "KJOURNAL_DEV_OTLP_GRPC_PORT"),
                    "OTLP/HTTP": (config.otlp_http_port, "KJOURNAL_DEV_OTLP_HTTP_PORT"),
                },
            )

    def _start_nodes(
        self,
        state: PlatformState,
        nodes: list[str],
        java: Java,
        data_dir: Path,
        credentials: Credentials | None,
        report: Reporter,
    ) -> None:
        for name in nodes:
            if name == KAFKA:
                component = self._start_kafka(java, data_dir, credentials)
            else:
                component = self._start_cassandra(java, data_dir, credentials)
            self._record_start(state, component, report)

    def _start_kafka(
        self, java: Java, data_dir: Path, credentials: Credentials | None
    ) -> ComponentState:
        config = self.config
        jars = maven.kafka_bundle().folder(config)
        secured: dict[str, Any] = {}
        if credentials is not None:
            tls = LoopbackTls(config.tls_dir).ensure(config.host)
            secured = {
                "overrides": kafka_security.secure_properties(config, credentials, tls),
                "format_arguments": kafka_security.scram_arguments(credentials),
            }
        pid, log = kafka_node.start(config, java, jars, data_dir, **secured)
        return ComponentState(
            KAFKA,
            pid,
            config.kafka_bootstrap,
            str(log),
            str(data_dir / "kafka"),
            [config.kafka_port, config.kafka_controller_port]
            + ([config.kafka_tls_port] if config.secure else []),
        )

    def _start_cassandra(
        self, java: Java, data_dir: Path, credentials: Credentials | None
    ) -> ComponentState:
        config = self.config
        jars = maven.cassandra_bundle().folder(config)
        auth = None if credentials is None else cassandra_security.YAML
        pid, log = cassandra_node.start(config, java, jars, data_dir, auth)
        return ComponentState(
            CASSANDRA,
            pid,
            f"{config.host}:{config.cassandra_port}",
            str(log),
            str(data_dir / "cassandra"),
            [config.cassandra_port, config.cassandra_storage_port],
        )

    def _wait_infrastructure(self, state: PlatformState, report: Reporter) -> None:
        """Until Kafka, Cassandra and the collector (if any) answer."""
        config = self.config
        kafka_options = self._kafka_options()
        logins = self._cassandra_logins()
        self._wait(
            state,
            KAFKA,
            config.kafka_timeout_s,
            lambda: asyncio.run(kafka_node.probe(config.kafka_bootstrap, kafka_options)),
            report,
        )
        self._wait(
            state,
            CASSANDRA,
            config.cassandra_timeout_s,
            lambda: cassandra_node.probe(config.host, config.cassandra_port, logins) is not None,
            report,
        )
        if config.collector:
            self._wait(
                state,
                COLLECTOR,
                config.service_timeout_s,
                lambda: collector.probe(config.host, config.otlp_http_port),
                report,
            )

    def _ensure_topics(self, report: Reporter) -> None:
        config = self.config
        groups = [(config.topics + config.snapshot_topics, config.partitions)]
        if config.application_topics:
            groups.append((config.application_topics, 1))
        for names, partitions in groups:
            asyncio.run(
                topics.ensure_topics(
                    config.kafka_bootstrap, names, partitions, options=self._kafka_options()
                )
            )
            counted = f"{partitions} partition" + ("s" if partitions > 1 else "")
            report(f"topics ready: {', '.join(names)} ({counted} when new)")

    def _ensure_schema(
        self, credentials: Credentials | None, data_dir: Path, report: Reporter
    ) -> None:
        """The journal's schema; on a secured platform with its roles, ACLs and grants."""
        config = self.config
        if credentials is None:
            apply_schema(config.host, config.cassandra_port, config.keyspace)
            report(f"schema ready in keyspace {config.keyspace}")
        else:
            self._secure(credentials, data_dir, report)

    def _endpoints(
        self, data_dir: Path, spark_jars: Path, *, started: bool, services: dict[str, str]
    ) -> Endpoints:
        config = self.config
        return Endpoints(
            kafka_bootstrap=config.kafka_bootstrap,
            cassandra_host=config.host,
            cassandra_port=config.cassandra_port,
            keyspace=config.keyspace,
            topics=config.journal_topics,
            spark_kafka_jars=spark_jars,
            data_dir=data_dir,
            started=started,
            services=services,
            otlp_endpoint=config.otlp_endpoint if config.collector else None,
            spans_dir=collector.spans_dir(data_dir) if config.collector else None,
        )

    def _start_collector(self, state: PlatformState, data_dir: Path, report: Reporter) -> None:
        config = self.config
        binary = ensure_collector(config, report)
        pid, log = collector.start(config, binary, data_dir)
        component = ComponentState(
            COLLECTOR,
            pid,
            f"{config.host}:{config.otlp_http_port}",
            str(log),
            str(collector.spans_dir(data_dir)),
            [config.otlp_grpc_port, config.otlp_http_port],
        )
        self._record_start(state, component, report)

    def _secure(self, credentials: Credentials, data_dir: Path, report: Reporter) -> None:
        """Kafka ACLs (once per broker storage), Cassandra roles, schema and grants."""
        config = self.config
        prefix = services.common_prefix(config.journal_topics)
        if not prefix:
            raise DevError("the secured platform grants ACLs on the topics' common prefix: none")
        tools = maven.fetch(maven.kafka_tools_bundle(), config)
        if kafka_security.grant_acls(
            config, find_java(config.java), tools, data_dir / "kafka", credentials, prefix
        ):
            report(f"Kafka ACLs granted on topics starting with {prefix!r}")
        cassandra_security.secure_schema(config, credentials)
        report(f"roles, schema and grants ready in keyspace {config.keyspace}")

    def _up_services(
        self, state: PlatformState, data_dir: Path, report: Reporter
    ) -> dict[str, str]:
        config = self.config
        to_start = [spec for spec in services.SERVICES if not self._running(state, spec.name)]
        require_free_ports(
            config.host,
            {
                f"{spec.name} service": (spec.port_of(config), spec.port_variable)
                for spec in to_start
            },
        )
        for spec in to_start:
            self._record_start(state, services.start(spec, config, data_dir), report)
        for spec in services.SERVICES:
            ready = functools.partial(services.is_ready, spec.url(config), spec.health_path)
            timeout = max(config.service_timeout_s, spec.min_start_timeout_s)
            self._wait(state, spec.name, timeout, ready, report)
        return {spec.name: spec.url(config) for spec in services.SERVICES}

    def _record_start(
        self, state: PlatformState, component: ComponentState, report: Reporter
    ) -> None:
        """Keep `component` in the state; one that had run before and died is a restart (on its
        existing data and log)."""
        before = state.components.get(component.name)
        if before is not None:
            component.restarts = before.restarts + 1
            component.restarted_at = datetime.now(UTC).isoformat(timespec="seconds")
        state.components[component.name] = component
        state.save(self.config.state_file)
        verb = "restarted" if before is not None else "started"
        report(f"{verb} {component.name} (pid {component.pid}), log: {component.log_file}")

    def supervise(
        self, report: Reporter = _quiet, interval_s: float = 2.0, stop: Event | None = None
    ) -> None:
        """Keep everything `up` started running: whatever exits is restarted (on its data), with
        an exponential backoff (up to a minute) while it keeps failing. Returns when `stop` is
        set; Ctrl-C stops supervising and leaves the processes running."""
        stop = stop or Event()
        failures = 0
        while not stop.wait(interval_s if failures == 0 else min(60.0, 2.0**failures)):
            state = self._state()
            if state is None:
                return  # `down` ran meanwhile
            dead = [name for name in state.components if not self._running(state, name)]
            if not dead:
                failures = 0
                continue
            report(f"{', '.join(dead)} exited: restarting")
            try:
                self.up(
                    report=report,
                    with_services=any(n not in INFRASTRUCTURE for n in state.components),
                )
            except DevError as err:
                failures += 1
                report(f"restart failed (attempt {failures}): {err}")
            else:
                failures = 0

    def _fetch(self, report: Reporter) -> Path:
        bundles = [
            maven.kafka_bundle(),
            maven.cassandra_bundle(),
            maven.spark_kafka_bundle(self.config.spark_version),
        ]
        if self.config.secure:
            bundles.append(maven.kafka_tools_bundle())
        missing = [b for b in bundles if not (b.folder(self.config) / ".complete").exists()]
        if missing:
            report(
                f"fetching from {self.config.maven_repo_url or 'Maven Central'}: "
                + ", ".join(f"{b.name} {b.version}" for b in missing)
            )
        with ThreadPoolExecutor(max_workers=len(bundles)) as pool:
            folders = list(pool.map(lambda b: maven.fetch(b, self.config), bundles))
        return folders[2]

    def _wait(
        self,
        state: PlatformState,
        name: str,
        timeout_s: int,
        ready: Callable[[], bool],
        report: Reporter,
    ) -> None:
        component = state.components[name]
        started = time.monotonic()
        deadline = started + timeout_s
        while True:
            if ready():
                report(f"{name} ready at {component.address} ({time.monotonic() - started:.1f} s)")
                return
            if not is_running(component.pid, component.marker):
                raise DevError(
                    f"{name} (pid {component.pid}) ended while waited for "
                    f"({how_it_ended(component.pid)}); last lines of {component.log_file}:\n"
                    + tail(Path(component.log_file))
                )
            if time.monotonic() >= deadline:
                raise DevError(
                    f"{name} did not answer within {timeout_s} s; last lines of "
                    f"{component.log_file}:\n" + tail(Path(component.log_file))
                )
            time.sleep(0.5)

    def status(self) -> list[ComponentStatus]:
        """Kafka, Cassandra, the collector, then each service (`not started` if `up` was told to
        skip them)."""
        state = self._state()
        result = []
        names = [*INFRASTRUCTURE, *(spec.name for spec in services.SERVICES)]
        for name in names:
            component = state.components.get(name) if state else None
            if component is None:
                result.append(ComponentStatus(name, None, "-", False, False, "not started", "-"))
                continue
            running = is_running(component.pid, component.marker)
            detail, healthy = "stopped", False
            restarted = (
                f", restarted {component.restarts}x (last {component.restarted_at})"
                if component.restarts
                else ""
            )
            if running and name == KAFKA:
                healthy = asyncio.run(kafka_node.probe(component.address, self._kafka_options()))
                detail = "metadata ok" if healthy else "not answering"
            elif running and name == COLLECTOR:
                host, port = component.address.rsplit(":", 1)
                healthy = collector.probe(host, int(port))
                detail = "OTLP ok" if healthy else "not answering"
            elif running and name not in INFRASTRUCTURE:
                spec = services.spec_named(name)
                path = spec.health_path if spec is not None else "/readyz"
                healthy, detail = services.probe(component.address, path)
            elif running:
                host, port = component.address.rsplit(":", 1)
                version = cassandra_node.probe(host, int(port), self._cassandra_logins())
                healthy = version is not None
                detail = f"release {version}" if healthy else "not answering"
            result.append(
                ComponentStatus(
                    name,
                    component.pid,
                    component.address,
                    running,
                    healthy,
                    detail + restarted,
                    component.log_file,
                )
            )
        return result

    def down(self, keep_data: bool = False) -> list[str]:
        """Stop every process `up` started, by PID, and free its ports; returns what was stopped."""
        state = self._state()
        if state is None:
            return []
        stopped = self._forget(state, keep_data)
        return stopped

    def _forget(self, state: PlatformState, keep_data: bool = False) -> list[str]:
        stopped = []
        ports: list[int] = []
        # Newest first: the services stop (and flush) while Kafka is still there.
        for component in reversed(state.components.values()):
            if is_running(component.pid, component.marker):
                stop(component.pid, component.marker)
                stopped.append(f"{component.name} (pid {component.pid})")
            ports.extend(component.ports)
        held = wait_ports_free(self.config.host, ports)
        if not keep_data:
            shutil.rmtree(state.data_dir, ignore_errors=True)
            self.config.credentials_file.unlink(missing_ok=True)  # useless without the data
        self.config.state_file.unlink(missing_ok=True)
        if held:
            raise DevError(
                f"stopped the platform, but ports {held} are still held by something else"
            )
        return stopped

    def spans_dir(self) -> Path:
        """Where the running platform's collector writes spans."""
        state = self._state()
        if state is None or COLLECTOR not in state.components:
            raise DevError(
                f"no collector was started by `kjournal-dev up` (no state in "
                f"{self.config.state_dir}; KJOURNAL_DEV_COLLECTOR=false?)"
            )
        return collector.spans_dir(Path(state.data_dir))

    def log_file(self, name: str) -> Path:
        state = self._state()
        if state is None or name not in state.components:
            raise DevError(
                f"{name} was not started by `kjournal-dev up` (no state in {self.config.state_dir})"
            )
        return Path(state.components[name].log_file)
