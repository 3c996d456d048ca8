"""The fault suite's platform (its own ports and state, started once for the suite and taken
down after it) and the table of every scenario's counts, printed at the end of the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.invariants import Tally
from tests.faults.invariants import table
from tests.faults.platform import FaultPlatform
from tests.faults.platform import fault_config
from tests.support.platform import own_platform
from tests.support.reports import add_session_report


@pytest.fixture(scope="package")
def faults_platform(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[FaultPlatform]:
    config = fault_config(tmp_path_factory.mktemp("faults-state"))
    with own_platform(config, pytestconfig, "faults", "fault suite logs") as (platform, endpoints):
        yield FaultPlatform(platform, endpoints)


@pytest.fixture(scope="package")
def tallies(pytestconfig: pytest.Config) -> Iterator[list[Tally]]:
    collected: list[Tally] = []
    yield collected
    if collected:
        add_session_report(pytestconfig, "fault scenarios", table(collected))
