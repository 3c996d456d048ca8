"""Session-wide access to the real platform started by infra/local (kjournal-dev)."""

from __future__ import annotations

import os
import re
import uuid

from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Endpoints, Platform


def start_platform() -> tuple[Platform, Endpoints]:
    """Start the platform, or reuse a running one; a failed start leaves nothing behind."""
    config = DevConfig.from_env()
    platform = Platform(config)
    was_running = config.state_file.exists()
    try:
        # Service tests start their own writers and readers, each configured for the test.
        endpoints = platform.up(with_services=False)
    except BaseException:
        if not was_running:
            platform.down()
        raise
    trace_to(endpoints)
    return platform, endpoints


def trace_to(endpoints: Endpoints) -> None:
    """Every service the tests start traces to the platform's collector, as `up`'s do (or,
    without a collector, not at all): the tests' processes inherit these variables."""
    if endpoints.otlp_endpoint is not None:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoints.otlp_endpoint
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "500"
        os.environ.pop("OTEL_SDK_DISABLED", None)
    elif "OTEL_EXPORTER_OTLP_ENDPOINT" not in os.environ:
        os.environ["OTEL_SDK_DISABLED"] = "true"


def keep_platform() -> bool:
    return os.environ.get("KJOURNAL_TEST_KEEP_PLATFORM", "") not in ("", "0", "false")


def unique_name(prefix: str) -> str:
    """A short unique name valid as both a Kafka topic and a Cassandra keyspace."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    assert re.fullmatch(r"[a-z][a-z0-9_]{0,47}", name)
    return name
