"""Session-wide hooks: the reports tests leave (tests/support/reports.py) end the terminal output."""

from __future__ import annotations

import pytest

from tests.support.reports import session_reports


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    for title, text in session_reports(config):
        terminalreporter.section(title)
        terminalreporter.write_line(text.rstrip())
