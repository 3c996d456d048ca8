"""Session-wide hooks: the unit tests run first, the reports tests leave
(tests/support/reports.py) end the terminal output, and what each module leaves unclosed fails
that module."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.reports import session_reports


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    for title, text in session_reports(config):
        terminalreporter.section(title)
        terminalreporter.write_line(text.rstrip())


_UNIT = Path(__file__).parent / "unit"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The unit tests first: they need nothing built, so on a cold machine they run while
    `scripts/dev prebuild` (.ci/run) builds helm and the collector that the suites after them
    need. (The container and e2e suites then move themselves to the end.)"""
    items.sort(key=lambda item: not item.path.is_relative_to(_UNIT))


@pytest.fixture(autouse=True, scope="module")
def _collect_what_the_module_left() -> Iterator[None]:
    """A socket (or file, or transport) left unclosed in a reference cycle warns when the
    collector happens to free it, which fails whichever test runs then (filterwarnings: error),
    often many modules later: a CI run once failed a test that opens no such socket. Collecting
    as each module ends fails the module that left it instead, at a cost of one full collection
    per module."""
    yield
    gc.collect()
