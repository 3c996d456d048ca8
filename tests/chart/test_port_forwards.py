"""The local ports that the Kubernetes docs, the chart's NOTES.txt and skaffold.yaml forward to
are not the ports of `scripts/dev up`: with both running, a curl meant for the cluster would reach
the local platform. And every documented `kubectl port-forward` binds 127.0.0.1 explicitly, so
that a taken port fails loudly instead of kubectl binding only [::1] without a word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from kjournal_dev.config import DevConfig

ROOT = Path(__file__).parents[2]
DOCUMENTED = [
    ROOT / "docs" / "kubernetes.md",
    ROOT / "helm" / "kjournal" / "templates" / "NOTES.txt",
    ROOT / "README.md",
]
_FORWARD = re.compile(r"kubectl[^\n]*?port-forward[^\n]*")
_LOCAL_PORT = re.compile(r"\s(\d{2,5})(?::|\s*&?\s*$)")


def _platform_ports() -> set[int]:
    """The ports `scripts/dev up` takes by default."""
    return {
        int(field.default)
        for name, field in DevConfig.model_fields.items()
        if name.endswith("_port")
    }


def _forwards() -> list[tuple[str, str]]:
    return [
        (path.name, match.group(0))
        for path in DOCUMENTED
        for match in _FORWARD.finditer(path.read_text())
    ]


def test_the_documents_show_port_forwards() -> None:
    assert {name for name, _ in _forwards()} >= {"kubernetes.md", "NOTES.txt"}


@pytest.mark.parametrize(("document", "command"), _forwards())
def test_a_documented_port_forward_binds_loopback_on_a_port_of_its_own(
    document: str, command: str
) -> None:
    assert "--address 127.0.0.1" in command, f"{document}: {command}"
    local = _LOCAL_PORT.search(command)
    assert local is not None, f"{document}: no local port in {command}"
    assert int(local.group(1)) not in _platform_ports(), f"{document}: {command}"


def test_skaffold_forwards_to_ports_of_its_own() -> None:
    forwards = yaml.safe_load((ROOT / "skaffold.yaml").read_text())["portForward"]
    local = {forward["localPort"] for forward in forwards}
    assert local
    assert not local & _platform_ports()
