"""Session-wide hooks: the unit tests run first, and the reports tests leave
(tests/support/reports.py) end the terminal output."""

from __future__ import annotations

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
