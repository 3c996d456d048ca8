"""`kjournal-dev settings-docs | metrics-docs | chart-values | chart-manifests | sync-client`: what
is generated from the code (docs tables from the settings classes and the metrics catalogue, the
Helm chart's settings values, the blocking HTTP client from the asyncio one) and from the chart
(the plain manifests of k8s/); each checks by default and regenerates with `--write` (registered
by kjournal_dev.cli)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["register"]


def _check_or_write(
    write: bool,
    regenerate: Callable[[], Iterable[Path]],
    problem: Callable[[], str | None],
    up_to_date: str,
) -> int:
    """`--write`: regenerate, naming each file written; else report the check's problem."""
    if write:
        for path in regenerate():
            print(f"wrote {path}")
        return 0
    found = problem()
    if found is not None:
        print(f"kjournal-dev: {found}", file=sys.stderr)
        return 1
    print(up_to_date)
    return 0


def _rewritten(path: Path, generated: Callable[[str], str]) -> list[Path]:
    """`path` becomes `generated(its text)`."""
    path.write_text(generated(path.read_text() if path.exists() else ""))
    return [path]


def _settings_docs(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import settings_docs

    path = settings_docs.docs_path()
    return _check_or_write(
        args.write,
        lambda: _rewritten(path, lambda current: settings_docs.render()),
        settings_docs.check,
        f"{path} is up to date",
    )


def _metrics_docs(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import metrics_docs

    path = metrics_docs.docs_path()
    return _check_or_write(
        args.write,
        lambda: _rewritten(path, metrics_docs.render),
        metrics_docs.check,
        f"{path} is up to date",
    )


def _chart_values(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import chart_values

    return _check_or_write(
        args.write,
        chart_values.write,
        chart_values.check,
        "the chart's settings values match the settings classes",
    )


def _chart_manifests(platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import k8s_manifests
    from kjournal_dev.kind.helm import Helm

    def report(line: str) -> None:
        print(f"kjournal-dev: {line}", file=sys.stderr)

    helm = Helm(platform.config, report)
    return _check_or_write(
        args.write,
        lambda: k8s_manifests.write(helm),
        lambda: k8s_manifests.check(helm),
        "k8s/ matches helm template of helm/kjournal",
    )


def _sync_client(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import sync_client

    return _check_or_write(
        args.write,
        lambda: [sync_client.write()],
        sync_client.check,
        f"{sync_client.sync_path()} is what its asyncio source generates",
    )


# Each command: its name, its help, what --write regenerates, and what runs it.
_COMMANDS: tuple[tuple[str, str, str, Callable[[Any, argparse.Namespace], int]], ...] = (
    (
        "settings-docs",
        "check (or --write) docs/configuration.md against the services' settings classes",
        "regenerate the file",
        _settings_docs,
    ),
    (
        "metrics-docs",
        "check (or --write) docs/observability.md's metric table against the metrics catalogue "
        "(kjournal/metrics/catalogue.py)",
        "regenerate the table",
        _metrics_docs,
    ),
    (
        "chart-values",
        "check (or --write) helm/kjournal's settings values against the settings classes",
        "regenerate them",
        _chart_values,
    ),
    (
        "chart-manifests",
        "check (or --write) the plain manifests in k8s/ against helm template",
        "regenerate them",
        _chart_manifests,
    ),
    (
        "sync-client",
        "check (or --write) the blocking HTTP client (kjournal/client/_sync.py) against its "
        "asyncio source, _async.py",
        "regenerate it",
        _sync_client,
    ),
)


def register(sub: Any) -> None:
    for name, summary, regenerates, run in _COMMANDS:
        parser = sub.add_parser(name, help=summary)
        parser.add_argument("--write", action="store_true", help=regenerates)
        parser.set_defaults(run=run)
