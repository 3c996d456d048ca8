"""Reports a test leaves for the end of the session (a fuzzing summary, a fault table): shown by
the root conftest's terminal summary, pass or fail, so CI logs carry the figures."""

from __future__ import annotations

import pytest

_REPORTS = pytest.StashKey[list[tuple[str, str]]]()


def add_session_report(config: pytest.Config, title: str, text: str) -> None:
    config.stash.setdefault(_REPORTS, []).append((title, text))


def session_reports(config: pytest.Config) -> list[tuple[str, str]]:
    return config.stash.get(_REPORTS, [])
