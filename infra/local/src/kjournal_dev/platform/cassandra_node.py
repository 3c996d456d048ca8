"""A real single Cassandra 5.0 node on loopback, run as its own JVM from Maven Central jars."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.java import Java
from kjournal_dev.process import spawn

# The module-system openings Cassandra 5.0 needs on Java 17 (its conf/jvm17-server.options).
_JPMS_FLAGS = [
    *(
        f"--add-exports={m}=ALL-UNNAMED"
        for m in (
            "java.base/jdk.internal.misc",
            "java.base/jdk.internal.ref",
            "java.base/sun.nio.ch",
            "java.management.rmi/com.sun.jmx.remote.internal.rmi",
            "java.rmi/sun.rmi.registry",
            "java.rmi/sun.rmi.server",
            "java.sql/java.sql",
            "java.base/java.lang.ref",
            "jdk.unsupported/sun.misc",
            "jdk.compiler/com.sun.tools.javac.file",
            "jdk.attach/sun.tools.attach",
        )
    ),
    *(
        f"--add-opens={m}=ALL-UNNAMED"
        for m in (
            "java.base/java.lang.module",
            "java.base/jdk.internal.loader",
            "java.base/jdk.internal.ref",
            "java.base/jdk.internal.reflect",
            "java.base/jdk.internal.math",
            "java.base/jdk.internal.module",
            "java.base/jdk.internal.util.jar",
            "jdk.management/com.sun.management.internal",
            "java.base/sun.nio.ch",
            "java.base/java.io",
            "java.base/java.nio",
            "java.base/java.lang.reflect",
            "jdk.compiler/com.sun.tools.javac",
            "java.base/java.lang",
            "java.base/java.util",
            "java.base/java.util.concurrent",
            "java.base/java.util.concurrent.atomic",
            "java.base/java.net",
            "java.base/java.math",
        )
    ),
]

_LOGBACK = """<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.cassandra" level="INFO"/>
  <logger name="com.thinkaurelius.thrift" level="ERROR"/>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
"""


def cassandra_yaml(config: DevConfig, home: Path, auth: str | None = None) -> str:
    """The node's configuration; `auth` replaces its authenticator and authorizer lines (the
    secured platform's roles)."""
    host = config.host
    yaml = f"""cluster_name: kjournal-dev
num_tokens: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
listen_address: {host}
rpc_address: {host}
storage_port: {config.cassandra_storage_port}
native_transport_port: {config.cassandra_port}
start_native_transport: true
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "{host}:{config.cassandra_storage_port}"
commitlog_sync: periodic
commitlog_sync_period: 10000ms
data_file_directories:
  - {home / "data"}
commitlog_directory: {home / "commitlog"}
saved_caches_directory: {home / "saved_caches"}
hints_directory: {home / "hints"}
cdc_raw_directory: {home / "cdc_raw"}
auto_snapshot: false
snapshot_on_duplicate_row_detection: false
# The replicator packs many journals' rows into UNLOGGED batches of up to 40 KiB by design; at the
# default 5 KiB the node would log (and send the client) a warning for nearly every batch.
batch_size_warn_threshold: 48KiB
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
"""
    if auth is not None:
        yaml = yaml.replace(
            "authenticator: AllowAllAuthenticator\nauthorizer: AllowAllAuthorizer\n", auth
        )
    return yaml


def _jamm_agent(jars: Path) -> str:
    candidates = sorted(jars.glob("jamm-*.jar"))
    if not candidates:
        raise DevError(f"the Cassandra jars in {jars} lack jamm; delete that folder and run again")
    return str(candidates[-1])


def start(
    config: DevConfig, java: Java, jars: Path, data_dir: Path, auth: str | None = None
) -> tuple[int, Path]:
    """Write the node's config and start its JVM; returns (pid, log file). Does not wait."""
    home = data_dir / "cassandra"
    for sub in ("data", "commitlog", "saved_caches", "hints", "cdc_raw", "logs"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    yaml_file = home / "cassandra.yaml"
    yaml_file.write_text(cassandra_yaml(config, home, auth))
    (home / "logback.xml").write_text(_LOGBACK)
    heap = config.cassandra_heap_mb
    cmd = [
        java.executable,
        f"-Xms{heap}m",
        f"-Xmx{heap}m",
        "-Xss512k",
        "-XX:+UseG1GC",
        "-XX:+ParallelRefProcEnabled",
        "-XX:MaxGCPauseMillis=300",
        *_JPMS_FLAGS,
        f"-javaagent:{_jamm_agent(jars)}",
        "-Djdk.attach.allowAttachSelf=true",
        "-Dio.netty.tryReflectionSetAccessible=true",
        "-Dcassandra-foreground=yes",
        f"-Dcassandra.config=file://{yaml_file}",
        f"-Dcassandra.storagedir={home}",
        f"-Dcassandra.logdir={home / 'logs'}",
        f"-Dlogback.configurationFile=file://{home / 'logback.xml'}",
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        "-Dcassandra.ring_delay_ms=1000",
        "-Dcassandra.superuser_setup_delay_ms=0",
        "-Dcassandra.disable_max_map_count_check=true",
        f"-Dkjournal.dev.home={home}",
        "-cp",
        f"{jars}/*",
        "org.apache.cassandra.service.CassandraDaemon",
    ]
    pid = spawn(cmd, log_file=home / "cassandra.log", cwd=home)
    return pid, home / "cassandra.log"


def probe(host: str, port: int, logins: Sequence[tuple[str, str]] = ()) -> str | None:
    """The node's release_version if it answers a CQL query (as the first of `logins` that
    works, if it asks for one), else None."""
    candidates: list[tuple[str, str] | None] = [*logins] or [None]
    for login in candidates:
        version = _probe(host, port, login)
        if version is not None:
            return version
    return None


def _probe(host: str, port: int, login: tuple[str, str] | None) -> str | None:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT
    from cassandra.cluster import Cluster
    from cassandra.cluster import ExecutionProfile
    from cassandra.policies import RoundRobinPolicy

    logging.getLogger("cassandra").setLevel(logging.CRITICAL)
    cluster = Cluster(
        [host],
        port=port,
        connect_timeout=5,
        control_connection_timeout=5,
        execution_profiles={
            EXEC_PROFILE_DEFAULT: ExecutionProfile(
                load_balancing_policy=RoundRobinPolicy(), request_timeout=5
            )
        },
        protocol_version=5,
        auth_provider=None if login is None else PlainTextAuthProvider(*login),
    )
    try:
        session = cluster.connect()
        row = session.execute("SELECT release_version FROM system.local", timeout=5).one()
        return str(row.release_version) if row else None
    except Exception:  # any failure here means "not ready yet"
        return None
    finally:
        cluster.shutdown()
