"""One kind cluster (`kjournal` by default): created from our node image (or kind's standard one
where a registry answers), its API server on 127.0.0.1, its kubeconfig under our state."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kjournal_dev.errors import DevError
from kjournal_dev.kind import network_policy
from kjournal_dev.kind import node_image
from kjournal_dev.kind.engine import Engine
from kjournal_dev.kind.engine import lacks_sys_resource
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.progress import elapsed
from kjournal_dev.kind.settings import KindSettings
from kjournal_dev.kind.toolchain import Toolchain

LIB_MODULES = Path("/lib/modules")
_REGISTRY_PROBE = "https://registry-1.docker.io/v2/"


def registry_reachable(url: str = _REGISTRY_PROBE, timeout_s: float = 5) -> bool:
    """Whether a container registry answers (a 401 with the distribution header counts: it is
    the registry asking for a token, not a proxy refusing)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.headers.get("Docker-Distribution-Api-Version") is not None
    except urllib.error.HTTPError as exc:
        return exc.headers.get("Docker-Distribution-Api-Version") is not None
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _pods_ready(items: list[dict[str, Any]], prefix: str) -> bool:
    pods = [
        item
        for item in items
        if item.get("kind") == "Pod" and item["metadata"]["name"].startswith(prefix)
    ]
    return bool(pods) and all(
        status.get("ready")
        for pod in pods
        for status in pod["status"].get("containerStatuses") or [{}]
    )


def _deployment_available(items: list[dict[str, Any]], name: str) -> bool:
    for item in items:
        if item.get("kind") == "Deployment" and item["metadata"]["name"] == name:
            wanted = item["spec"].get("replicas", 1)
            return bool(wanted) and item["status"].get("availableReplicas", 0) >= wanted
    return False


def config_yaml(offline: bool, clamp_oom_score_adj: bool) -> str:
    lines = [
        "kind: Cluster",
        "apiVersion: kind.x-k8s.io/v1alpha4",
        "networking:",
        "  apiServerAddress: 127.0.0.1",
    ]
    if offline:
        # No kindnetd image: a bridge CNI config baked into the node serves the one node.
        lines += [
            "  disableDefaultCNI: true",
            "kubeadmConfigPatches:",
            "- |",
            "  kind: ClusterConfiguration",
            "  etcd:",
            "    local:",
            f"      imageTag: {node_image.ETCD_TAG}",
            "  dns:",
            f"    imageTag: {node_image.COREDNS_TAG}",
            "- |",
            "  kind: InitConfiguration",
            "  patches:",
            f"    directory: {node_image.KUBEADM_PATCHES_DIR}",
        ]
    elif clamp_oom_score_adj:
        # The standard node image runs containerd 2 (config version 3); see kind-base.Dockerfile.
        lines += [
            "containerdConfigPatches:",
            "- |",
            '  [plugins."io.containerd.cri.v1.runtime"]',
            "    restrict_oom_score_adj = true",
        ]
    lines += ["nodes:", "- role: control-plane", ""]
    return "\n".join(lines)


@dataclass(frozen=True)
class ClusterStatus:
    exists: bool
    nodes: str  # `kubectl get nodes` output, or why not


class Cluster:
    def __init__(
        self, settings: KindSettings, progress: Progress, engine: Engine, chain: Toolchain
    ) -> None:
        self.settings = settings
        self.progress = progress
        self.engine = engine
        self.chain = chain
        self.marker = settings.kind_state / "created-lib-modules"

    def _kind(self, *args: str) -> list[str]:
        return [str(self.chain.path("kind")), *args]

    def kubectl(self, *args: str) -> list[str]:
        return [
            str(self.chain.path("kubectl")),
            "--kubeconfig",
            str(self.settings.kubeconfig),
            *args,
        ]

    def _listed(self) -> bool:
        """kind knows the cluster: its node container exists, running or not."""
        if not self.chain.path("kind").is_file() or self.engine.running() is None:
            return False
        listed = self.progress.capture(
            self._kind("get", "clusters"), env=self.engine.env(), check=False
        )
        return self.settings.cluster_name in listed.stdout.split()

    def _node_running(self) -> bool:
        inspected = self.progress.capture(
            self.engine.docker(
                "inspect",
                "--format",
                "{{.State.Running}}",
                f"{self.settings.cluster_name}-control-plane",
            ),
            env=self.engine.env(),
            check=False,
        )
        return inspected.stdout.strip() == "true"

    def exists(self) -> bool:
        """A cluster to use: its node running and its kubeconfig ours. A node container left in
        the data root by an earlier engine (stopped, or made under another state directory) is
        not one: `create` removes it."""
        return self._listed() and self._node_running() and self.settings.kubeconfig.is_file()

    def create(self, offline: bool, image: str | None) -> None:
        settings = self.settings
        if self._listed():
            self._kind_delete(f"removing the stale kind cluster {settings.cluster_name}")
        settings.kind_state.mkdir(parents=True, exist_ok=True)
        # kind bind-mounts /lib/modules into the node; docker would create it if it is missing.
        if not LIB_MODULES.exists():
            LIB_MODULES.mkdir()
            self.marker.write_text(str(LIB_MODULES))
            self.progress.report(
                f"created {LIB_MODULES} (empty) for kind's bind mount; `kind down` removes it"
            )
        config = settings.kind_state / "kind-config.yaml"
        config.write_text(config_yaml(offline, lacks_sys_resource()))
        started = time.monotonic()
        cmd = self._kind(
            "create",
            "cluster",
            "--name",
            settings.cluster_name,
            "--config",
            str(config),
            "--kubeconfig",
            str(settings.kubeconfig),
            "--wait",
            "3m",
        )
        if image is not None:
            cmd += ["--image", image]
        self.progress.run(
            f"creating kind cluster {settings.cluster_name}",
            cmd,
            "kind-create",
            env=self.engine.env(),
        )
        self._wait_system_pods(enforce_network_policies=offline)
        self.progress.report(
            f"cluster {settings.cluster_name} ready in {elapsed(time.monotonic() - started)}; "
            f"kubeconfig: {settings.kubeconfig}"
        )

    def _wait_system_pods(
        self, enforce_network_policies: bool = False, timeout_s: float = 180
    ) -> None:
        """kube-proxy, coredns (cluster DNS), local-path-provisioner (PVCs) and, offline,
        kube-router (NetworkPolicies) serving.

        Our node image ships local-path-provisioner scaled to zero (node_image.storage_manifest):
        started with the node it would call the API through its Service before kube-proxy has
        programmed it, exit, and sit out the kubelet's 10-20 s back-off. It is scaled up here,
        as soon as kube-proxy runs; kube-router's DaemonSet is applied then for the same reason.
        One `kubectl get` per poll: the cluster is ready the moment its pods are, not a
        command's polling interval later."""
        env = self.engine.env()
        deadline = time.monotonic() + timeout_s
        scaled = False
        waiting: list[str] = []
        while time.monotonic() < deadline:
            listed = self.progress.capture(
                self.kubectl(
                    "get", "pods,deployments,daemonsets", "--all-namespaces", "-o", "json"
                ),
                env=env,
                check=False,
                timeout=30,
            )
            if listed.returncode == 0:
                items = json.loads(listed.stdout)["items"]
                proxy = _pods_ready(items, "kube-proxy-")
                if proxy and not scaled:
                    self.progress.capture(
                        self.kubectl(
                            "-n",
                            "local-path-storage",
                            "scale",
                            "deployment/local-path-provisioner",
                            "--replicas=1",
                        ),
                        env=env,
                    )
                    if enforce_network_policies:
                        self.apply_network_policy_enforcement()
                    scaled = True
                waiting = [
                    name
                    for name, ready in (
                        ("kube-proxy", proxy),
                        ("coredns", _deployment_available(items, "coredns")),
                        (
                            "local-path-provisioner",
                            _deployment_available(items, "local-path-provisioner"),
                        ),
                        (
                            network_policy.DAEMONSET,
                            not enforce_network_policies or network_policy.daemonset_ready(items),
                        ),
                    )
                    if not ready
                ]
                if not waiting:
                    return
            time.sleep(0.5)
        raise DevError(
            f"cluster {self.settings.cluster_name} came up but {', '.join(waiting) or 'its API'} "
            f"did not get ready within {timeout_s:.0f} s; `kjournal-dev kind status` and "
            f'`kubectl get pods -A` (after `eval "$(kjournal-dev kind env)"`) show more'
        )

    def apply_network_policy_enforcement(self) -> None:
        manifest = self.settings.kind_state / "kube-router.yaml"
        manifest.write_text(network_policy.manifest())
        self.progress.capture(self.kubectl("apply", "-f", str(manifest)), env=self.engine.env())

    def _kind_delete(self, what: str) -> None:
        self.progress.run(
            what,
            self._kind(
                "delete",
                "cluster",
                "--name",
                self.settings.cluster_name,
                "--kubeconfig",
                str(self.settings.kubeconfig),
            ),
            "kind-delete",
            env=self.engine.env(),
        )

    def delete(self) -> list[str]:
        done = []
        if self._listed():
            self._kind_delete(f"deleting kind cluster {self.settings.cluster_name}")
            done.append(f"deleted cluster {self.settings.cluster_name}")
        elif self.engine.running() is not None:
            # No kind binary in this build cache (e.g. `down` run with another
            # KJOURNAL_DEV_BUILD_CACHE than `up`): the node containers go all the same, by the
            # label kind gives them, so the engine's data root keeps no node to restart.
            done += self._remove_nodes()
        self.settings.kubeconfig.unlink(missing_ok=True)
        if self.marker.exists():
            try:
                LIB_MODULES.rmdir()
                done.append(f"removed {LIB_MODULES} (created by kind up for kind's bind mount)")
            except FileNotFoundError:
                pass
            except OSError:
                raise DevError(
                    f"{LIB_MODULES} (created by kind up) is not empty now; left in place"
                ) from None
            self.marker.unlink()
        return done

    def _remove_nodes(self) -> list[str]:
        env = self.engine.env()
        label = f"label=io.x-k8s.kind.cluster={self.settings.cluster_name}"
        found = self.progress.capture(
            self.engine.docker("ps", "-a", "-q", "--filter", label), env=env, check=False
        ).stdout.split()
        if not found:
            return []
        self.progress.capture(self.engine.docker("rm", "-f", "-v", *found), env=env)
        return [f"removed the node container(s) of cluster {self.settings.cluster_name}"]

    def status(self) -> ClusterStatus:
        if not self.exists():
            return ClusterStatus(False, "no cluster")
        out = self.progress.capture(
            self.kubectl("get", "nodes", "-o", "wide"),
            env=self.engine.env(),
            check=False,
            timeout=30,
        )
        return ClusterStatus(True, (out.stdout or out.stderr).strip())

    def load(self, images: list[str]) -> None:
        """Copy images from the engine into the node (one `docker save`: shared layers once)."""
        self.progress.run(
            f"loading {', '.join(images)} into the cluster",
            self._kind("load", "docker-image", "--name", self.settings.cluster_name, *images),
            "kind-load",
            env=self.engine.env(),
        )
