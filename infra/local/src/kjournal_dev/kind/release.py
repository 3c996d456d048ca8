"""`kjournal-dev kind up --release`: the chart installed on the kind cluster, against the dev
Kafka and Cassandra running inside it, with the values skaffold's `kind` profile passes
(skaffold/values-kind.yaml). The steps are those of docs/kubernetes.md (Plain helm on
kjournal-dev's kind cluster), so following the docs by hand and running this agree."""

from __future__ import annotations

from pathlib import Path

from kjournal_dev.config import find_repo_root
from kjournal_dev.kind import dev_storage
from kjournal_dev.kind.helm import Helm
from kjournal_dev.kind.tool import KindTool

__all__ = ["NAMESPACE", "RELEASE", "RELEASE_IMAGES", "install_release", "next_steps"]

NAMESPACE = "kjournal"
RELEASE = "kjournal"
RELEASE_IMAGES = ("writer", "reader", "migrate", "replicator", "kafka", "cassandra")
"""The chart's four images and the dev Kafka and Cassandra (tag `dev`, loaded, never pulled)."""

_VALUES = Path("skaffold/values-kind.yaml")
_CHART = Path("helm/kjournal")


def install_release(tool: KindTool, namespace: str = NAMESPACE) -> None:
    """Load the images, start the dev Kafka and Cassandra in `namespace` (with the Secrets of
    the Cassandra roles) and wait for them, then `helm upgrade --install` the chart and wait for
    its pods and its schema Job (an existing release is upgraded: running this again is safe)."""
    root = find_repo_root()
    progress, env = tool.progress, tool.engine.env()
    tool.load(RELEASE_IMAGES)
    dev_storage.apply(tool, namespace)
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
    """What to type next to see the whole system work: the toolchain on PATH, the port-forwards
    (ports that do not collide with `kjournal-dev up`'s), an append, a read, the replication
    status, the topic feed, the replicator's health and metrics, helm test, and the clean-up."""
    writer, reader = f"service/{RELEASE}-writer", f"service/{RELEASE}-reader"
    replicator = f"deployment/{RELEASE}-replicator"
    forward = f"kubectl -n {namespace} port-forward --address 127.0.0.1"
    return [
        f"kjournal is installed in namespace {namespace}; next, in your shell:",
        '  eval "$(scripts/dev kind env)"',
        f"  {forward} {writer} 18081:8080 &",
        f"  {forward} {reader} 18082:8080 &",
        f"  {forward} {replicator} 19400:9400 &",
        "  curl -s -X POST http://127.0.0.1:18081/v1/journals/journal/order-1/events \\",
        "       -H 'content-type: application/json' \\",
        """       -d '{"events": [{"seqNr": 1, "payload": {"amount": 5}}]}'""",
        "  curl -s http://127.0.0.1:18082/v1/journals/journal/order-1/events",
        "  curl -s http://127.0.0.1:18082/v1/journals/journal/order-1         # still only in Kafka?",
        "  curl -s http://127.0.0.1:18082/v1/topics/journal/replication       # lag per partition",
        "  curl -s http://127.0.0.1:18082/v1/topics/journal/events            # the topic feed",
        "  curl -s http://127.0.0.1:19400/healthz",
        "  curl -s http://127.0.0.1:19400/metrics | grep '^kjournal_replicat'",
        f"  helm test {RELEASE} -n {namespace}",
        "  kill $(jobs -p)                                                  # the port-forwards",
        "everything else this created goes with: scripts/dev kind down",
    ]
