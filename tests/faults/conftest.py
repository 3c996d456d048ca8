"""The fault suite's platform (its own ports and state, started once for the suite and taken
down after it) and the table of every scenario's counts, printed at the end of the session."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from kjournal_dev.platform.lifecycle import Platform

from tests.faults.invariants import Tally, table
from tests.faults.platform import FaultPlatform, fault_config
from tests.support.reports import add_session_report


@pytest.fixture(scope="package")
def faults_platform(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[FaultPlatform]:
    platform = Platform(fault_config(tmp_path_factory.mktemp("faults-state")))
    try:
        fp = FaultPlatform(platform, platform.up(with_services=True))
        yield fp
    finally:
        state = platform.status()
        kept = platform.config.cache_dir / "test-logs" / "faults"  # outlives pytest's tmp dirs
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        for component in state:
            if component.log_file != "-":
                shutil.copy(component.log_file, kept / Path(component.log_file).name)
        add_session_report(pytestconfig, "fault suite logs", f"every component's log: {kept}")
        platform.down()


@pytest.fixture(scope="package")
def tallies(pytestconfig: pytest.Config) -> Iterator[list[Tally]]:
    collected: list[Tally] = []
    yield collected
    if collected:
        add_session_report(pytestconfig, "fault scenarios", table(collected))
