"""The kind cluster kjournal-dev brings up with nothing pulled, and kjournal's images in it: the dev
Kafka and Cassandra as pods with their data on PVCs, the schema job, a writer pod appending through
them (read back through a reader pod, before and after both data pods are replaced), and the
replicator as a Spark on Kubernetes driver with executor pods of its own image."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kjournal_dev.kind import dev_storage
from kjournal_dev.kind.tool import KindTool

from tests.support.containers import Kubectl
from tests.support.containers import http_get
from tests.support.containers import http_post_json

pytestmark = [pytest.mark.kind, pytest.mark.timeout(3600)]

WAIT = "--timeout=300s"


def test_node_is_ready_and_system_pods_run(kind_cluster: KindTool):
    kubectl = Kubectl(kind_cluster, "kube-system")
    nodes = kubectl.json("get", "nodes")["items"]
    assert len(nodes) == 1
    ready = {c["type"]: c["status"] for c in nodes[0]["status"]["conditions"]}["Ready"]
    assert ready == "True"
    pods = [
        pod
        for namespace in ("kube-system", "local-path-storage")
        for pod in Kubectl(kind_cluster, namespace).json("get", "pods")["items"]
    ]
    names = [pod["metadata"]["name"] for pod in pods]
    for system in (
        "coredns-",
        "kube-proxy-",
        "local-path-provisioner-",
        "etcd-",
        "kube-apiserver-",
    ):
        assert any(name.startswith(system) for name in names), (system, names)
    not_running = [p["metadata"]["name"] for p in pods if p["status"]["phase"] != "Running"]
    assert not_running == []
    server = kubectl.json("config", "view", "--minify")["clusters"][0]["cluster"]["server"]
    assert server.startswith("https://127.0.0.1:")


@pytest.fixture(scope="module")
def smoke(kind_cluster: KindTool, manifests: Path) -> Iterator[Kubectl]:
    """The namespace with the dev Kafka and Cassandra up (Cassandra requiring a role, as in
    production), the schema applied, writer and reader ready; deleted afterwards."""
    namespace = f"kjournal-smoke-{uuid.uuid4().hex[:6]}"
    kubectl = Kubectl(kind_cluster, namespace)
    kubectl("create", "namespace", namespace)
    try:
        # storage.yaml, with the Secrets of the roles its Cassandra requires (generated passwords)
        dev_storage.apply(kind_cluster, namespace)
        kubectl("apply", "-f", str(manifests / "migrate.yaml"))
        kubectl("wait", "--for=condition=complete", "job/migrate", WAIT)
        kubectl("apply", "-f", str(manifests / "services.yaml"))
        kubectl("rollout", "status", "deployment/writer", WAIT)
        kubectl("rollout", "status", "deployment/reader", WAIT)
        yield kubectl
    finally:
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def _read(
    kubectl: Kubectl, topic: str, journal: str, timeout_s: float = 120
) -> list[dict[str, object]]:
    """The journal's events through the reader (port-forward), once it answers."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while time.monotonic() < deadline:
        try:
            with kubectl.port_forward("service/reader", 8080) as port:
                status, body = http_get(
                    f"http://127.0.0.1:{port}/v1/journals/{topic}/{journal}/events"
                )
            if status == 200:
                return [json.loads(line) for line in body.splitlines() if line.strip()]
            last = (status, body[:300])
        except (OSError, AssertionError) as exc:
            last = exc
        time.sleep(2)
    raise AssertionError(f"reader never answered: {last}")


def _append(
    kubectl: Kubectl, topic: str, journal: str, body: dict[str, Any], timeout_s: float = 120
) -> dict[str, Any]:
    """Append through the writer pod (port-forward), as a client does: a 504 (the writer could
    not learn the outcome, e.g. while the reader's Service does not route yet) is resent, which
    docs/concurrency.md makes safe; the answer is a 201, or a 200 replay of the first try."""
    deadline = time.monotonic() + timeout_s
    with kubectl.port_forward("service/writer", 8080) as port:
        while True:
            status, answer = http_post_json(
                f"http://127.0.0.1:{port}/v1/journals/{topic}/{journal}/events", body
            )
            if status == 201 or (status == 200 and answer["replay"]):
                return dict(answer)
            assert status == 504, answer
            assert time.monotonic() < deadline, answer
            time.sleep(1)


def test_dev_kafka_and_cassandra_keep_their_data_on_pvcs(smoke: Kubectl):
    claims = smoke.json("get", "pvc")["items"]
    assert sorted(c["metadata"]["name"] for c in claims) == ["data-cassandra-0", "data-kafka-0"]
    assert {c["status"]["phase"] for c in claims} == {"Bound"}
    assert {c["spec"]["storageClassName"] for c in claims} == {"standard"}


def test_writer_pod_appends_through_dev_kafka_and_reader_reads_it_back(smoke: Kubectl):
    topic, journal = "journal", f"kind-{uuid.uuid4().hex[:10]}"
    answer = _append(
        smoke,
        topic,
        journal,
        {
            "events": [
                {"seqNr": 1, "payload": {"amount": 5}},
                {"seqNr": 2, "payload": "shipped", "payloadType": "text"},
            ]
        },
    )
    assert answer["seqNr"] == 2, answer
    assert [(e["seqNr"], e["payload"]) for e in _read(smoke, topic, journal)] == [
        (1, {"amount": 5}),
        (2, "shipped"),
    ]

    # Replace both data pods: what they hold lives on their PVCs, so the journal is still there.
    smoke("delete", "pod", "kafka-0", "cassandra-0", "--wait=true")
    smoke("rollout", "status", "statefulset/kafka", WAIT)
    smoke("rollout", "status", "statefulset/cassandra", WAIT)
    # A fresh reader: the Cassandra driver would otherwise keep dialling the old pod's address.
    smoke("rollout", "restart", "deployment/reader")
    smoke("rollout", "status", "deployment/reader", WAIT)
    assert [e["seqNr"] for e in _read(smoke, topic, journal, timeout_s=180)] == [1, 2]


def _append_and_wait_replicated(smoke: Kubectl, logs_of: str, timeout_s: float = 180) -> None:
    """Append one event through the writer, then wait until the reader's replication status shows
    pointer2 at or past its offset (the replicator stored it in Cassandra)."""
    topic, journal = "journal", f"spark-{uuid.uuid4().hex[:10]}"
    answer = _append(smoke, topic, journal, {"events": [{"seqNr": 1, "payload": {"amount": 9}}]})
    partition = answer["partition"]
    deadline = time.monotonic() + timeout_s
    row: dict[str, object] = {}
    while True:
        try:
            with smoke.port_forward("service/reader", 8080) as port:
                _, body = http_get(f"http://127.0.0.1:{port}/v1/topics/{topic}/replication")
            row = next(p for p in json.loads(body)["partitions"] if p["partition"] == partition)
        except (OSError, ValueError, AssertionError) as exc:  # a reader pod still starting
            row = {"error": repr(exc)}
        pointer = row.get("pointer2")
        if isinstance(pointer, int) and pointer >= answer["offset"]:
            return
        logs = smoke("logs", logs_of, check=False)[-3000:]
        assert time.monotonic() < deadline, f"not replicated: {row}\n{logs}"
        time.sleep(2)


def _wait_for_pods(
    smoke: Kubectl, selector: str, logs_of: str, timeout_s: float = 180
) -> list[Any]:
    """The pods matching `selector`, once there are any (else the tail of `logs_of`'s log)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pods: list[Any] = smoke.json("get", "pods", "-l", selector)["items"]
        if pods:
            return pods
        assert time.monotonic() < deadline, smoke("logs", logs_of, check=False)[-3000:]
        time.sleep(2)


def test_replicator_image_runs_spark_on_kubernetes_with_executor_pods(
    smoke: Kubectl, manifests: Path
):
    """The driver (client mode, in a pod) asks the API for executors; they run the image's
    `executor` role and apply what the driver's micro-batch hands them."""
    smoke("apply", "-f", str(manifests / "replicator.yaml"))
    smoke("rollout", "status", "deployment/replicator", WAIT)
    _wait_for_pods(smoke, "spark-role=executor", "deployment/replicator")
    smoke("wait", "--for=condition=Ready", "pod", "-l", "spark-role=executor", WAIT)
    _append_and_wait_replicated(smoke, "deployment/replicator")
    executors = smoke.json("get", "pods", "-l", "spark-role=executor")["items"]
    assert executors
    assert {c["image"] for pod in executors for c in pod["spec"]["containers"]} == {
        "kjournal/replicator:dev"
    }


def test_replicator_image_runs_as_a_cluster_mode_driver_from_spark_submit(
    smoke: Kubectl, manifests: Path
):
    """spark-submit --deploy-mode cluster from a pod: Spark starts the driver pod with the image's
    `driver` role, the driver its executor pods, and they replicate."""
    # One replicator at a time: the client-mode one (previous test) goes, with its executors.
    smoke("delete", "deployment/replicator", "--ignore-not-found", "--wait=true")
    smoke("wait", "--for=delete", "pod", "-l", "spark-role", WAIT)
    smoke("apply", "-f", str(manifests / "replicator.yaml"))
    smoke("scale", "deployment/replicator", "--replicas=0")
    smoke("apply", "-f", str(manifests / "spark-submit.yaml"))
    try:
        smoke("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/spark-submit", WAIT)
        selector = "kjournal-test=cluster-mode,spark-role=driver"
        driver = _wait_for_pods(smoke, selector, "pod/spark-submit")[0]
        name = driver["metadata"]["name"]
        assert driver["spec"]["containers"][0]["args"][0] == "driver"
        smoke("wait", "--for=condition=Ready", f"pod/{name}", WAIT)
        app = driver["metadata"]["labels"]["spark-app-selector"]
        executors = f"spark-role=executor,spark-app-selector={app}"
        _wait_for_pods(smoke, executors, f"pod/{name}")
        smoke("wait", "--for=condition=Ready", "pod", "-l", executors, WAIT)
        _append_and_wait_replicated(smoke, f"pod/{name}")
        assert smoke.json("get", "pod", name)["status"]["phase"] == "Running"
    finally:
        smoke("delete", "pod", "-l", "kjournal-test=cluster-mode", "--wait=false", check=False)
