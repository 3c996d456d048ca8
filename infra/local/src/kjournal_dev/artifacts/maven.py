"""Fetch JVM artifacts and their runtime dependencies from Maven Central into the build cache,
once: each bundle one entry (`jars/<name>-<version>/`, kjournal_dev/build_cache.py)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from kjournal_dev import build_cache
from kjournal_dev.config import CASSANDRA_VERSION
from kjournal_dev.config import KAFKA_VERSION
from kjournal_dev.config import LOG4J_VERSION
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError

MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"
FETCH_ATTEMPTS = 3
RETRY_BACKOFF_S = 5.0
_UNREACHABLE_HINTS = (
    "Could not transfer",
    "Connection refused",
    "UnknownHostException",
    "Connect to",
    "No route to host",
    "timed out",
    "Network is unreachable",
)


@dataclass(frozen=True)
class Bundle:
    """A named set of Maven coordinates copied, with runtime dependencies, into one folder."""

    name: str
    version: str
    coordinates: tuple[str, ...]

    def folder(self, config: DevConfig) -> Path:
        return config.jars_dir / f"{self.name}-{self.version}"


def kafka_bundle() -> Bundle:
    return Bundle(
        "kafka",
        KAFKA_VERSION,
        (
            f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
            f"org.apache.logging.log4j:log4j-core:{LOG4J_VERSION}",
            f"org.apache.logging.log4j:log4j-slf4j2-impl:{LOG4J_VERSION}",
        ),
    )


def kafka_tools_bundle() -> Bundle:
    """Kafka's command-line tools (kafka-acls is `org.apache.kafka.tools.AclCommand`): the secured
    platform grants its ACLs with them. Used with the broker's jars on the class path."""
    return Bundle("kafka-tools", KAFKA_VERSION, (f"org.apache.kafka:kafka-tools:{KAFKA_VERSION}",))


def cassandra_bundle() -> Bundle:
    return Bundle(
        "cassandra", CASSANDRA_VERSION, (f"org.apache.cassandra:cassandra-all:{CASSANDRA_VERSION}",)
    )


def spark_kafka_bundle(spark_version: str) -> Bundle:
    return Bundle(
        "spark-sql-kafka",
        spark_version,
        (f"org.apache.spark:spark-sql-kafka-0-10_2.13:{spark_version}",),
    )


def _pom(bundle: Bundle) -> str:
    deps = []
    for coordinate in bundle.coordinates:
        group, artifact, version = coordinate.split(":")
        deps.append(
            "<dependency>"
            f"<groupId>{escape(group)}</groupId><artifactId>{escape(artifact)}</artifactId>"
            f"<version>{escape(version)}</version></dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>kjournal.dev</groupId><artifactId>{escape(bundle.name)}</artifactId>"
        "<version>0</version><packaging>pom</packaging>"
        f"<dependencies>{''.join(deps)}</dependencies></project>"
    )


def _settings(mirror_url: str) -> str:
    return (
        "<settings><mirrors><mirror><id>kjournal-dev</id><mirrorOf>*</mirrorOf>"
        f"<url>{escape(mirror_url)}</url></mirror></mirrors></settings>"
    )


def _require_reachable(url: str, bundle: Bundle) -> None:
    """Fail fast, in one line, when the repository does not answer at all (any HTTP status will do)."""
    try:
        with urllib.request.urlopen(url, timeout=20):
            pass
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DevError(
            f"cannot reach {url} to fetch {bundle.name} {bundle.version} ({reason}): "
            "check the network, or point KJOURNAL_DEV_MAVEN_REPO at a reachable mirror"
        ) from None


@contextmanager
def _fetching(bundle: Bundle, config: DevConfig) -> Iterator[None]:
    """One fetch of a bundle at a time on the machine (a prebuild and a test's platform may want
    the same one at once): the second waits, then finds it complete."""
    config.jars_dir.mkdir(parents=True, exist_ok=True)
    with (config.jars_dir / f".{bundle.name}-{bundle.version}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def fetch(bundle: Bundle, config: DevConfig) -> Path:
    """The bundle's folder of jars, downloading it first if it is not complete yet."""
    target = bundle.folder(config)
    if build_cache.complete(target):
        return target
    with _fetching(bundle, config):
        return _fetch(bundle, config)


def _fetch(bundle: Bundle, config: DevConfig) -> Path:
    target = bundle.folder(config)
    if build_cache.complete(target):  # another process fetched it while this one waited
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise DevError(
            "Maven (`mvn`) is not on PATH; it fetches Kafka and Cassandra: apt-get install maven"
        )
    _require_reachable(config.maven_repo_url or MAVEN_CENTRAL, bundle)
    config.maven_local_repo.mkdir(parents=True, exist_ok=True)
    marker = " ".join(bundle.coordinates) + "\n"
    with (
        build_cache.entry(target, marker) as partial,
        tempfile.TemporaryDirectory(prefix="kjournal-mvn-") as work,
    ):
        (Path(work) / "pom.xml").write_text(_pom(bundle))
        cmd = [
            mvn,
            "-B",
            "-q",
            f"-Dmaven.repo.local={config.maven_local_repo}",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={partial}",
        ]
        # Some parent POMs (Spark's) declare extra repositories that this network cannot reach:
        # route every repository through the one mirror.
        (Path(work) / "settings.xml").write_text(_settings(config.maven_repo_url or MAVEN_CENTRAL))
        cmd[1:1] = ["-s", str(Path(work) / "settings.xml")]
        for attempt in range(1, FETCH_ATTEMPTS + 1):
            result = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
            output = result.stdout + result.stderr
            unreachable = any(hint in output for hint in _UNREACHABLE_HINTS)
            if result.returncode == 0 or not unreachable or attempt == FETCH_ATTEMPTS:
                break
            # a dropped connection to the repository is usually gone a few seconds later
            wait_s = RETRY_BACKOFF_S * attempt
            print(  # noqa: T201 - progress of a long fetch, as the CLI prints it
                f"kjournal-dev: fetching {bundle.name} {bundle.version} failed to reach the "
                f"repository (attempt {attempt} of {FETCH_ATTEMPTS}); retrying in {wait_s:g} s",
                file=sys.stderr,
                flush=True,
            )
            time.sleep(wait_s)
        if result.returncode != 0:  # raised inside the entry: nothing is kept
            where = config.maven_repo_url or "Maven Central"
            if unreachable:
                raise DevError(
                    f"cannot reach {where} to fetch {bundle.name} {bundle.version}: "
                    "check the network (or KJOURNAL_DEV_MAVEN_REPO), then run again"
                )
            last = [line for line in output.splitlines() if "ERROR" in line][:1]
            raise DevError(
                f"Maven failed to fetch {bundle.name} {bundle.version}: "
                f"{' '.join(last) or output[-300:]}"
            )
    return target
