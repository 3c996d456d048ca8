"""`kjournal-dev settings-docs | metrics-docs | chart-values | chart-manifests | sync-client`: what
is generated from the code (docs tables from the settings classes and the metrics catalogue, the
Helm chart's settings values, the blocking HTTP client from the asyncio one) and from the chart
(the plain manifests of k8s/); each checks by default and regenerates with `--write` (registered
by kjournal_dev.cli)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["register"]


def _generated_doc(
    write: bool, path: Path, generated: Callable[[str], str], problem: str | None
) -> int:
    """`--write`: `path` becomes `generated(its text)`; else report `problem` (None: up to date)."""
    if write:
        path.write_text(generated(path.read_text() if path.exists() else ""))
        print(f"wrote {path}")
        return 0
    if problem is not None:
        print(f"kjournal-dev: {problem}", file=sys.stderr)
        return 1
    print(f"{path} is up to date")
    return 0


def _settings_docs(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import settings_docs

    return _generated_doc(
        args.write,
        settings_docs.docs_path(),
        lambda current: settings_docs.render(),
        None if args.write else settings_docs.check(),
    )


def _metrics_docs(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import metrics_docs

    return _generated_doc(
        args.write,
        metrics_docs.docs_path(),
        metrics_docs.render,
        None if args.write else metrics_docs.check(),
    )


def _chart_values(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import chart_values

    if args.write:
        for path in chart_values.write():
            sys.stdout.write(f"wrote {path}\n")
        return 0
    problem = chart_values.check()
    if problem is not None:
        sys.stderr.write(f"kjournal-dev: {problem}\n")
        return 1
    sys.stdout.write("the chart's settings values match the settings classes\n")
    return 0


def _chart_manifests(platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import k8s_manifests
    from kjournal_dev.kind.helm import Helm

    def report(line: str) -> None:
        sys.stderr.write(f"kjournal-dev: {line}\n")

    helm = Helm(platform.config, report)
    if args.write:
        for path in k8s_manifests.write(helm):
            sys.stdout.write(f"wrote {path}\n")
        return 0
    problem = k8s_manifests.check(helm)
    if problem is not None:
        sys.stderr.write(f"kjournal-dev: {problem}\n")
        return 1
    sys.stdout.write("k8s/ matches helm template of helm/kjournal\n")
    return 0


def _sync_client(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.generate import sync_client

    if args.write:
        sys.stdout.write(f"wrote {sync_client.write()}\n")
        return 0
    problem = sync_client.check()
    if problem is not None:
        sys.stderr.write(f"kjournal-dev: {problem}\n")
        return 1
    sys.stdout.write(f"{sync_client.sync_path()} is what its asyncio source generates\n")
    return 0


def register(sub: Any) -> None:
    docs = sub.add_parser(
        "settings-docs",
        help="check (or --write) docs/configuration.md against the services' settings classes",
    )
    docs.add_argument("--write", action="store_true", help="regenerate the file")
    docs.set_defaults(run=_settings_docs)
    metric_docs = sub.add_parser(
        "metrics-docs",
        help="check (or --write) docs/observability.md's metric table against the metrics "
        "catalogue (kjournal/metrics/catalogue.py)",
    )
    metric_docs.add_argument("--write", action="store_true", help="regenerate the table")
    metric_docs.set_defaults(run=_metrics_docs)
    values = sub.add_parser(
        "chart-values",
        help="check (or --write) helm/kjournal's settings values against the settings classes",
    )
    values.add_argument("--write", action="store_true", help="regenerate them")
    values.set_defaults(run=_chart_values)
    manifests = sub.add_parser(
        "chart-manifests",
        help="check (or --write) the plain manifests in k8s/ against helm template",
    )
    manifests.add_argument("--write", action="store_true", help="regenerate them")
    manifests.set_defaults(run=_chart_manifests)
    client = sub.add_parser(
        "sync-client",
        help="check (or --write) the blocking HTTP client (kjournal/client/_sync.py) against "
        "its asyncio source, _async.py",
    )
    client.add_argument("--write", action="store_true", help="regenerate it")
    client.set_defaults(run=_sync_client)
