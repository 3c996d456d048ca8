"""`kjournal-dev chart-values` and `chart-manifests`: what is generated from the settings classes
into the Helm chart, and from the chart into the plain manifests of k8s/."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]


def _chart_values(_platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev import chart_values

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
    from kjournal_dev import k8s_manifests
    from kjournal_dev.helm import Helm

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


def register(sub: Any) -> None:
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
