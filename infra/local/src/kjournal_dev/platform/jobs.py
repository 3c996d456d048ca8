"""`kjournal-dev expire` and `kjournal-dev check`: the operators' jobs, run once against the
running platform (docs/operations.md).

Each runs `python -m kjournal_replicator.expiry` or `.check` in this workspace's Python with the
platform's settings; on a secured platform the expiry job logs in as its own principal
(`kjournal-expiry`, `kjournal_expiry`: it reads and produces to Kafka, only reads Cassandra) and
the check as the replicator (whose store code its repair writes with).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.platform.services import cassandra_env
from kjournal_dev.platform.services import credentials_env
from kjournal_dev.platform.services import replicator_env
from kjournal_dev.platform.services import tracing_env
from kjournal_dev.security.credentials import CASSANDRA_EXPIRY
from kjournal_dev.security.credentials import KAFKA_EXPIRY

__all__ = ["check_env", "expiry_env", "run_job"]


def expiry_env(config: DevConfig) -> dict[str, str]:
    return {
        **tracing_env(config),
        **cassandra_env(config),
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": config.kafka_bootstrap,
        "KJOURNAL_EXPIRY__TOPICS": ",".join(config.journal_topics),
        **credentials_env(config, KAFKA_EXPIRY, CASSANDRA_EXPIRY),
    }


def check_env(config: DevConfig, home: Path) -> dict[str, str]:
    env = replicator_env(config, home)
    env["KJOURNAL_HTTP__ENABLED"] = "false"
    return env


def run_job(config: DevConfig, job: str, arguments: Sequence[str]) -> int:
    """Run `kjournal_replicator.<job>` with the platform's settings; its exit status."""
    if not config.state_file.exists():
        raise DevError("the platform is not running: `kjournal-dev up` first")
    base = {name: value for name, value in os.environ.items() if not name.startswith("KJOURNAL_")}
    with tempfile.TemporaryDirectory(prefix=f"kjournal-{job}-") as home:
        env = expiry_env(config) if job == "expiry" else check_env(config, Path(home))
        command = [sys.executable, "-m", f"kjournal_replicator.{job}", *arguments]
        return subprocess.run(command, env={**base, **env}, check=False).returncode
