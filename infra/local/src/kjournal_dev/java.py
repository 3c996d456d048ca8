"""Find the `java` to run the JVM services with, and check its version."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev.errors import DevError

REQUIRED_MAJOR = 17


@dataclass(frozen=True)
class Java:
    executable: str
    major: int


def _candidate(explicit: str | None) -> str:
    if explicit:
        return explicit
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise DevError(
            "no `java` found: install a Java 17 runtime (Debian: apt-get install openjdk-17-jdk-headless)"
        )
    return found


def _major_version(executable: str) -> int:
    try:
        probe = subprocess.run(
            [executable, "-XshowSettings:properties", "-version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError as exc:
        raise DevError(f"cannot run {executable}: {exc.strerror}") from None
    match = re.search(r"java\.specification\.version\s*=\s*(\d+)(?:\.(\d+))?", probe.stderr)
    if match is None:
        match = re.search(r'version "(\d+)(?:\.(\d+))?', probe.stderr)
    if match is None:
        raise DevError(f"cannot tell the version of {executable} (it printed no version)")
    major = int(match.group(1))
    # Java 8 and older report "1.8"
    return int(match.group(2)) if major == 1 and match.group(2) else major


def find_java(explicit: str | None = None) -> Java:
    """The Java 17 runtime Cassandra 5.0 needs (Kafka 4 runs on it too); anything else is refused."""
    executable = _candidate(explicit)
    major = _major_version(executable)
    if major != REQUIRED_MAJOR:
        raise DevError(
            f"Cassandra 5.0 needs Java {REQUIRED_MAJOR}, but {executable} is Java {major}: "
            f"put a Java {REQUIRED_MAJOR} first on PATH, or set JAVA_HOME or KJOURNAL_DEV_JAVA to it"
        )
    return Java(executable=executable, major=major)
