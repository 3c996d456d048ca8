"""The e2e session: a kind cluster (kjournal-dev's, or the one KJOURNAL_E2E_KUBECONFIG names) with
kjournal's images loaded, the dev Kafka and Cassandra in a fresh namespace, and kjournal
installed there with `helm install` and tests/e2e/values-e2e.yaml. Everything that talks to the
cluster uses the `kubernetes` client; helm and kind run through their CLIs.

The time each phase took (cluster, images, installs, tests) is printed at the end of the run.
kjournal-dev's engine and cluster are stopped at the end if this session started them
(KJOURNAL_TEST_KEEP_KIND=1 keeps them).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root
from kjournal_dev.kind import dev_storage
from kjournal_dev.kind.helm import Helm
from kjournal_dev.kind.tool import KindTool
from kubernetes import client
from kubernetes import config
from kubernetes import utils

from tests.integration.containers.conftest import keep_kind
from tests.integration.containers.conftest import no_engine_reason
from tests.integration.containers.conftest import terminal_lines
from tests.support.k8s import pods_wide
from tests.support.k8s import wait_for

ROOT = find_repo_root()
CHART = ROOT / "helm" / "kjournal"
VALUES = Path(__file__).parent / "values-e2e.yaml"
DEV_STORAGE = ROOT / dev_storage.STORAGE_MANIFEST
IMAGES = ("writer", "reader", "migrate", "replicator", "kafka", "cassandra")
RELEASE = "kjournal"
HERE = Path(__file__).parent

_phases: dict[str, float] = {}


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    started = time.monotonic()
    try:
        yield
    finally:
        _phases[name] = _phases.get(name, 0.0) + time.monotonic() - started


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The e2e tests run last (after the container tests, whose cluster they reuse)."""
    items.sort(key=lambda item: item.path.is_relative_to(HERE))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    if not item.path.is_relative_to(HERE):
        return (yield)
    started = time.monotonic()
    nested = sum(_phases.values())  # the session's phases a test's set-up runs count apart
    try:
        return (yield)
    finally:
        own = time.monotonic() - started - (sum(_phases.values()) - nested)
        _phases["tests"] = _phases.get("tests", 0.0) + own


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _phases:
        return
    terminalreporter.section("e2e phases")
    for name, seconds in _phases.items():
        terminalreporter.write_line(f"{name:<45} {seconds:7.1f} s")


@dataclass
class Cluster:
    kubeconfig: Path
    api: client.ApiClient
    helm: Helm
    report: Callable[[str], None]

    def run_helm(self, *args: str, timeout: float = 1200) -> str:
        result = self.helm.run(args, env={"KUBECONFIG": str(self.kubeconfig)}, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(
                f"helm {' '.join(args[:2])} failed:\n{result.stdout}{result.stderr}"
            )
        return result.stdout

    def show_pods(self, why: str) -> None:
        self.report(f"\n$ kubectl get pods -A -o wide   # {why} (from the API)")
        self.report(pods_wide(client.CoreV1Api(self.api)))


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    report = terminal_lines(request)
    helm = Helm(DevConfig.from_env(), lambda line: report(f"kjournal-dev: {line}"))
    given = os.environ.get("KJOURNAL_E2E_KUBECONFIG", "").strip()
    if given:
        # A cluster of the user's: kjournal's images must already be there (kind load, a registry).
        with phase("cluster (given)"):
            helm.binary()
            api = config.new_client_from_config(config_file=given)
        with api:
            yield Cluster(Path(given), api, helm, report)
        return
    reason = no_engine_reason()
    if reason is not None:
        pytest.skip(f"no Docker engine can run here: {reason}")
    tool = KindTool(DevConfig.from_env(), lambda line: report(f"kjournal-dev: {line}"))
    engine_was_running = tool.engine.running() is not None
    try:
        with phase("cluster (kind up)"):
            tool.up()
            helm.binary()
        with phase("images (build, kind load)"):
            images = tool.build_images(IMAGES)
            tool.cluster.load([spec.image for spec in images])
        api = config.new_client_from_config(config_file=str(tool.settings.kubeconfig))
        with api:
            yield Cluster(tool.settings.kubeconfig, api, helm, report)
    finally:
        # Also when the set-up failed: an engine this session started does not outlive it.
        if not engine_was_running and not keep_kind():
            with phase("kind down"):
                tool.down()


@dataclass
class Release:
    cluster: Cluster
    namespace: str
    name: str = RELEASE

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.cluster.api)

    @property
    def apps(self) -> client.AppsV1Api:
        return client.AppsV1Api(self.cluster.api)

    def helm(self, *args: str, timeout: float = 1200) -> str:
        return self.cluster.run_helm(*args, "--namespace", self.namespace, timeout=timeout)

    def helm_test(self, name: str) -> str:
        """`helm test` of release `name`; when it fails, the assertion carries the test pod's log
        and the failed pod is deleted (helm deletes only a pod that succeeded, and `--logs` cannot
        read that one: it is gone by then)."""
        try:
            return self.helm("test", name, "--timeout", "5m")
        except AssertionError as failed:
            pod = f"{name}-test"
            try:
                log = self.core.read_namespaced_pod_log(pod, self.namespace)
            except client.ApiException as exc:
                log = f"(no log: {exc.status} {exc.reason})"
            with contextlib.suppress(client.ApiException):
                self.core.delete_namespaced_pod(pod, self.namespace, grace_period_seconds=0)
            services = self._service_log_tails(name)
            raise AssertionError(f"{failed}\nthe test pod {pod} logged:\n{log}{services}") from None

    def _service_log_tails(self, release: str, lines: int = 20) -> str:
        """The last lines each writer and reader pod of `release` logged (what the test pod's
        requests met)."""
        tails = []
        for component in ("writer", "reader"):
            selector = (
                f"app.kubernetes.io/instance={release},app.kubernetes.io/component={component}"
            )
            try:
                pods = self.core.list_namespaced_pod(self.namespace, label_selector=selector).items
                for found in pods:
                    text = self.core.read_namespaced_pod_log(
                        found.metadata.name, self.namespace, tail_lines=lines
                    )
                    tails.append(f"\n{found.metadata.name} logged (last {lines} lines):\n{text}")
            except client.ApiException as exc:
                tails.append(f"\n{component} pods: no log ({exc.status} {exc.reason})")
        return "".join(tails)

    def component(self, name: str) -> str:
        """The chart's name for a component's objects (the release is named after the chart)."""
        return f"{self.name}-{name}"

    def pods(self, selector: str) -> list[Any]:
        return list(self.core.list_namespaced_pod(self.namespace, label_selector=selector).items)

    def running_pods(self, selector: str) -> list[Any]:
        return [
            p
            for p in self.pods(selector)
            if p.status.phase == "Running" and p.metadata.deletion_timestamp is None
        ]


def _statefulset_ready(apps: client.AppsV1Api, namespace: str, name: str) -> bool:
    status = apps.read_namespaced_stateful_set(name, namespace).status
    return bool(status.ready_replicas and status.ready_replicas >= 1)


@pytest.fixture(scope="session")
def release(cluster: Cluster) -> Iterator[Release]:
    """kjournal installed with helm in a fresh namespace beside the dev Kafka and Cassandra
    (which requires authentication: the Secrets of its roles, with generated passwords, first)."""
    namespace = f"kjournal-e2e-{uuid.uuid4().hex[:6]}"
    core = client.CoreV1Api(cluster.api)
    apps = client.AppsV1Api(cluster.api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    installed = Release(cluster, namespace)
    try:
        with phase("install (dev Kafka and Cassandra)"):
            documents = [dev_storage.secret_manifest(role) for role in dev_storage.ROLES]
            documents += [d for d in yaml.safe_load_all(DEV_STORAGE.read_text()) if d]
            utils.create_from_yaml(cluster.api, yaml_objects=documents, namespace=namespace)
            for name in ("kafka", "cassandra"):
                wait_for(
                    f"statefulset/{name} ready",
                    functools.partial(_statefulset_ready, apps, namespace, name),
                    timeout_s=600,
                )
        with phase("install (helm install kjournal --wait)"):
            cluster.report(
                f"\n$ helm install {RELEASE} helm/kjournal -n {namespace} -f {VALUES.relative_to(ROOT)} --wait --wait-for-jobs"
            )
            notes = installed.helm(
                "install",
                RELEASE,
                str(CHART),
                "--values",
                str(VALUES),
                "--wait",
                "--wait-for-jobs",
                "--timeout",
                "15m",
            )
            cluster.report(notes)
        cluster.show_pods("after helm install")
        yield installed
    finally:
        with phase("teardown (helm uninstall, namespace)"):
            cluster.helm.run(
                ["uninstall", RELEASE, "--namespace", namespace, "--wait"],
                env={"KUBECONFIG": str(cluster.kubeconfig)},
            )
            with contextlib.suppress(client.ApiException):
                core.delete_namespace(namespace)
