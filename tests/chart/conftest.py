"""The chart's static checks: helm (built by the kind toolchain, once, into the cache) renders it
with every documented value set; nothing here needs a cluster."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root
from kjournal_dev.kind.helm import Helm

ROOT = find_repo_root()
CHART = ROOT / "helm" / "kjournal"
# The documented value sets: the defaults, then each file of the chart's ci/ folder.
VALUE_SETS: dict[str, list[Path]] = {
    "defaults": [],
    **{path.stem: [path] for path in sorted((CHART / "ci").glob("*.yaml"))},
}


def _terminal(request: pytest.FixtureRequest) -> Callable[[str], None]:
    capture = request.config.pluginmanager.getplugin("capturemanager")
    terminal = request.config.pluginmanager.getplugin("terminalreporter")

    def report(line: str) -> None:
        with capture.global_and_fixture_disabled():
            terminal.write_line(f"kjournal-dev: {line}", flush=True)

    return report


@pytest.fixture(scope="session")
def helm(request: pytest.FixtureRequest) -> Helm:
    helm = Helm(DevConfig.from_env(), _terminal(request))
    helm.binary()
    return helm


Render = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="session")
def render(helm: Helm) -> Render:
    """helm template → the documents (hooks and the test pod included)."""

    def render(
        values: list[Path] | None = None,
        sets: Mapping[str, str] | None = None,
        kube_version: str = "1.34.0",
    ) -> list[dict[str, Any]]:
        text = helm.template(
            CHART,
            release="kj",
            namespace="kjns",
            values=values or [],
            sets=sets,
            kube_version=kube_version,
        )
        return [doc for doc in yaml.safe_load_all(text) if doc]

    return render


def by_kind(documents: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in documents if d["kind"] == kind}


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {entry["name"]: entry.get("value", entry.get("valueFrom")) for entry in container["env"]}


def egress_ports(policy: dict[str, Any]) -> set[int]:
    """The ports a NetworkPolicy's egress rules open."""
    return {port["port"] for rule in policy["spec"]["egress"] for port in rule.get("ports", [])}


def pod_peers(rules: list[dict[str, Any]], direction: str) -> set[str]:
    """The components a policy's rules name as pod peers (same namespace)."""
    return {
        peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
        for rule in rules
        for peer in rule.get(direction, [])
        if "podSelector" in peer
        and "namespaceSelector" not in peer  # DNS: kube-dns in its own namespace
        and "app.kubernetes.io/component" in peer["podSelector"].get("matchLabels", {})
    }


@pytest.fixture
def tmp_values(tmp_path: Path) -> Callable[[dict[str, Any]], Path]:
    def write(values: dict[str, Any]) -> Path:
        path = tmp_path / f"values-{len(list(tmp_path.iterdir()))}.yaml"
        path.write_text(yaml.safe_dump(values))
        return path

    return write
