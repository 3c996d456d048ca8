"""Session fixtures of the container tests: kjournal-dev's own Docker engine, kjournal's images
built once per session, and (for the kind tests) one kind cluster with them loaded.

What the session started it stops at the end (`kjournal-dev kind down`); an engine or cluster that
was already running is reused and left running, as the platform fixture does with the loopback
platform. KJOURNAL_TEST_KEEP_KIND=1 keeps what the session started. On a machine where no Docker
engine can run at all (not Linux, not root, no dockerd and no apt-get to install it), these tests
skip with one line; everywhere else a failure to build or start is a test error.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
from kjournal_dev.config import DevConfig
from kjournal_dev.kind.engine import DOCKERD
from kjournal_dev.kind.tool import KindTool

from tests.support.containers import Docker

KIND_IMAGES = ("writer", "reader", "migrate", "replicator", "kafka", "cassandra")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Container tests run last: their engine and cluster (session fixtures) then stop with the
    session instead of idling through the rest of the suite."""
    here = Path(__file__).parent
    items.sort(key=lambda item: item.path.is_relative_to(here))


def no_engine_reason() -> str | None:
    if sys.platform != "linux":
        return "Docker engines run on Linux only"
    if os.geteuid() != 0:
        return "kjournal-dev starts its own dockerd, which needs root"
    if not DOCKERD.exists() and shutil.which("apt-get") is None:
        return f"{DOCKERD} is missing and there is no apt-get to install it"
    return None


def terminal_lines(request: pytest.FixtureRequest, prefix: str = "") -> Callable[[str], None]:
    """Progress lines of long builds straight to the terminal (pytest captures the rest)."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    terminal = request.config.pluginmanager.getplugin("terminalreporter")
    lock = threading.Lock()

    def report(line: str) -> None:
        with lock, capture.global_and_fixture_disabled():
            terminal.write_line(prefix + line, flush=True)

    return report


def keep_kind() -> bool:
    """KJOURNAL_TEST_KEEP_KIND: leave the kind cluster (and the engine) running afterwards."""
    return os.environ.get("KJOURNAL_TEST_KEEP_KIND", "") not in ("", "0", "false")


@pytest.fixture(scope="session")
def kind_tool(request: pytest.FixtureRequest) -> Iterator[KindTool]:
    reason = no_engine_reason()
    if reason is not None:
        pytest.skip(f"no Docker engine can run here: {reason}")
    tool = KindTool(DevConfig.from_env(), terminal_lines(request, "kjournal-dev: "))
    engine_was_running = tool.engine.running() is not None
    tool.start_engine()
    cluster_existed = tool.cluster.exists()
    yield tool
    if keep_kind():
        return
    if not engine_was_running:
        tool.down()
    elif not cluster_existed:
        tool.cluster.delete()


@pytest.fixture(scope="session")
def docker(kind_tool: KindTool) -> Docker:
    return Docker(kind_tool)


@pytest.fixture(scope="session")
def images(kind_tool: KindTool) -> dict[str, str]:
    """Every image, built (or found up to date) once per session: name → reference."""
    return {spec.name: spec.image for spec in kind_tool.build_images([])}


@pytest.fixture(scope="session")
def kind_cluster(kind_tool: KindTool, images: dict[str, str]) -> KindTool:
    """The kind cluster up, with the images the kind tests run loaded into it."""
    kind_tool.up()
    kind_tool.cluster.load([images[name] for name in KIND_IMAGES])
    return kind_tool


@pytest.fixture(scope="session")
def manifests() -> Path:
    return Path(__file__).parent / "manifests"
