"""docs/observability.md lists every metric the services publish, and the Grafana dashboard
queries only metrics that exist."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ("libs/kjournal/src", "libs/kjournal-service/src", "services")
NAME = re.compile(r'"(kjournal_[a-z0-9_]+_(?:total|seconds|records|offset|up|in_flight))"')


def _published() -> set[str]:
    names: set[str] = set()
    for source in SOURCES:
        for path in (ROOT / source).rglob("*.py"):
            names |= set(NAME.findall(path.read_text()))
    return names


def test_the_catalog_lists_every_metric():
    published = _published()
    assert len(published) > 25
    catalog = set(
        re.findall(r"`(kjournal_[a-z0-9_]+)`", (ROOT / "docs/observability.md").read_text())
    )
    assert published - catalog == set()


def test_the_dashboard_queries_published_metrics_only():
    dashboard = json.loads((ROOT / "deploy/grafana/kjournal.json").read_text())
    queried = {
        re.sub(r"_(bucket|sum|count)$", "", name)
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
        for name in re.findall(r"\bkjournal_[a-z0-9_]+", target["expr"])
    }
    assert len(queried) > 8
    assert queried - _published() == set()
    titles = {panel["title"] for panel in dashboard["panels"]}
    assert {"Appends per second", "Append latency", "Read latency by phase (p99)"} <= titles
    assert {"Answered from the fold", "Replication lag per partition"} <= titles
    assert {"Quarantined records"} <= titles
