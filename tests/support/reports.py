"""Reports a test leaves for the end of the session (a fuzzing summary, a fault table): shown by
the root conftest's terminal summary, pass or fail, so CI logs carry the figures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

_REPORTS = pytest.StashKey[list[tuple[str, str]]]()


def add_session_report(config: pytest.Config, title: str, text: str) -> None:
    config.stash.setdefault(_REPORTS, []).append((title, text))


def session_reports(config: pytest.Config) -> list[tuple[str, str]]:
    return config.stash.get(_REPORTS, [])


def reported_table(config: pytest.Config, title: str, width: int) -> Iterator[dict[str, str]]:
    """For a fixture: a table its tests fill (what they tried → what it gave), added as a
    session report once the fixture ends, unless empty; `width` is the first column's."""
    rows: dict[str, str] = {}
    yield rows
    if rows:
        lines = [f"{what:<{width}} {outcome}" for what, outcome in rows.items()]
        add_session_report(config, title, "\n".join(lines))
