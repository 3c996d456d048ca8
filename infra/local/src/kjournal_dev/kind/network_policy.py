"""NetworkPolicy enforcement in the offline kind cluster: kube-router's firewall as a DaemonSet
(assets/kube-router.yaml), its image built into the node image (node_image.KUBE_ROUTER_IMAGE),
applied by `kind up` once kube-proxy runs (kube-router reaches the API through its Service).

Where a registry answers, kind's standard node image runs kindnetd, which enforces
NetworkPolicies itself: nothing is applied there."""

from __future__ import annotations

from importlib import resources
from typing import Any

from kjournal_dev.kind.node_image import KUBE_ROUTER_IMAGE

DAEMONSET = "kube-router"
_ASSET = "assets/kube-router.yaml"
_PLACEHOLDER = "KUBE_ROUTER_IMAGE"


def manifest() -> str:
    text = resources.files("kjournal_dev.kind").joinpath(_ASSET).read_text()
    return text.replace(_PLACEHOLDER, KUBE_ROUTER_IMAGE)


def daemonset_ready(items: list[dict[str, Any]], name: str = DAEMONSET) -> bool:
    """Every pod the DaemonSet wants is scheduled and ready (kube-router's /healthz answers once
    its firewall controller synced)."""
    for item in items:
        if item.get("kind") == "DaemonSet" and item["metadata"]["name"] == name:
            status = item.get("status") or {}
            wanted = status.get("desiredNumberScheduled", 0)
            return bool(wanted) and status.get("numberReady", 0) >= wanted
    return False
