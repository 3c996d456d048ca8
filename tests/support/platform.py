"""Session-wide access to the real platform started by infra/local (kjournal-dev)."""

from __future__ import annotations

import os
import re
import uuid

from kjournal_dev.config import DevConfig
from kjournal_dev.platform import Endpoints, Platform


def start_platform() -> tuple[Platform, Endpoints]:
    """Start the platform, or reuse a running one; a failed start leaves nothing behind."""
    config = DevConfig.from_env()
    platform = Platform(config)
    was_running = config.state_file.exists()
    try:
        # Service tests start their own writers and readers, each configured for the test.
        return platform, platform.up(with_services=False)
    except BaseException:
        if not was_running:
            platform.down()
        raise


def keep_platform() -> bool:
    return os.environ.get("KJOURNAL_TEST_KEEP_PLATFORM", "") not in ("", "0", "false")


def unique_name(prefix: str) -> str:
    """A short unique name valid as both a Kafka topic and a Cassandra keyspace."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    assert re.fullmatch(r"[a-z][a-z0-9_]{0,47}", name)
    return name
