"""`kjournal-dev kind up --release`: the chart installed on the kind cluster, against the dev
Kafka and Cassandra running inside it, with the values skaffold's `kind` profile passes
(skaffold/values-kind.yaml). The steps are those of docs/kubernetes.md (Plain helm on
kjournal-dev's kind cluster), so following the docs by hand and running this agree."""

from __future__ import annotations

from pathlib import Path

from kjournal_dev.config import find_repo_root
from kjournal_dev.kind.helm import Helm
from kjournal_dev.kind.tool import KindTool

__all__ = ["NAMESPACE", "RELEASE", "RELEASE_IMAGES", "install_release", "next_steps"]

NAMESPACE = "kjournal"
RELEASE = "kjournal"
RELEASE_IMAGES = ("writer", "reader", "migrate", "replicator", "kafka", "cassandra")
"""The chart's four images and the dev Kafka and Cassandra (tag `dev`, loaded, never pulled)."""

_STORAGE = Path("tests/integration/containers/manifests/storage.yaml")
_VALUES = Path("skaffold/values-kind.yaml")
_CHART = Path("helm/kjournal")


def install_release(tool: KindTool, namespace: str = NAMESPACE) -> None:
    """Load the images, start the dev Kafka and Cassandra in `namespace` and wait for them, then
    `helm upgrade --install` the chart and wait for its pods and its schema Job (an existing
    release is upgraded: running this again is safe)."""
    root = find_repo_root()
    progress, env = tool.progress, tool.engine.env()
    kubectl = tool.cluster.kubectl
    tool.load(RELEASE_IMAGES)
    if progress.capture(kubectl("get", "namespace", namespace), env=env, check=False).returncode:
        progress.capture(kubectl("create", "namespace", namespace), env=env)
    progress.run(
        f"starting the dev Kafka and Cassandra in namespace {namespace}",
        kubectl("-n", namespace, "apply", "-f", str(root / _STORAGE)),
        "release-storage",
        env=env,
    )
    for statefulset in ("kafka", "cassandra"):
        progress.run(
            f"waiting for the dev {statefulset.capitalize()}",
            kubectl(
                "-n", namespace, "rollout", "status", f"statefulset/{statefulset}", "--timeout=10m"
            ),
            "release-storage",
            env=env,
        )
    helm = Helm(tool.config, progress.report)
    progress.run(
        f"helm upgrade --install {RELEASE} (its pods ready, its schema Job done)",
        [
            str(helm.binary()),
            "upgrade",
            "--install",
            RELEASE,
            str(root / _CHART),
            "--namespace",
            namespace,
            "--values",
            str(root / _VALUES),
            "--kubeconfig",
            str(tool.settings.kubeconfig),
            "--wait",
            "--wait-for-jobs",
            "--timeout",
            "15m",
        ],
        "release-helm",
        env=helm.env(env),
    )


def next_steps(namespace: str = NAMESPACE) -> list[str]:
    """What to type next: the toolchain on PATH, the port-forwards and a first append and read
    (ports that do not collide with `kjournal-dev up`'s), and the clean-up."""
    writer, reader = f"service/{RELEASE}-writer", f"service/{RELEASE}-reader"
    forward = f"kubectl -n {namespace} port-forward --address 127.0.0.1"
    return [
        f"kjournal is installed in namespace {namespace}; next, in your shell:",
        '  eval "$(scripts/dev kind env)"',
        f"  {forward} {writer} 18081:8080 &",
        f"  {forward} {reader} 18082:8080 &",
        "  curl -s -X POST http://127.0.0.1:18081/v1/journals/journal/order-1/events \\",
        "       -H 'content-type: application/json' \\",
        """       -d '{"events": [{"seqNr": 1, "payload": {"amount": 5}}]}'""",
        "  curl -s http://127.0.0.1:18082/v1/journals/journal/order-1/events",
        f"  helm test {RELEASE} -n {namespace}",
        "everything this created goes with: scripts/dev kind down",
    ]
