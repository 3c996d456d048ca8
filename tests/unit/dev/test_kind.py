"""The kind tool's pure parts: the runtime wrapper, settings, the cluster config, the storage
manifest, progress reporting and the one-line failures. (The whole tool runs for real in
tests/integration/containers.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from kjournal_dev.cli import build_parser
from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root
from kjournal_dev.errors import DevError
from kjournal_dev.kind import cluster
from kjournal_dev.kind import engine as engine_module
from kjournal_dev.kind import hostnet
from kjournal_dev.kind import images
from kjournal_dev.kind import network_policy
from kjournal_dev.kind import node_image
from kjournal_dev.kind import packages
from kjournal_dev.kind import progress
from kjournal_dev.kind import toolchain
from kjournal_dev.kind.engine import lacks_sys_resource
from kjournal_dev.kind.settings import KindSettings
from kjournal_dev.kind.tool import KindTool

CAPS = ["CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_NET_ADMIN"]


@pytest.fixture
def wrapper(tmp_path: Path) -> tuple[Path, Path]:
    """The runtime wrapper in front of a stand-in runtime that records how it was called."""
    record = tmp_path / "called.json"
    runtime = tmp_path / "runtime"
    runtime.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"json.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n"
    )
    runtime.chmod(0o755)
    source = resources.files("kjournal_dev.kind").joinpath("assets/runc-wrapper.py").read_text()
    path = tmp_path / "runc-wrapper"
    path.write_text(source.replace("@REAL_RUNC@", str(runtime)))
    path.chmod(0o755)
    return path, record


def _spec(capabilities: list[str]) -> dict[str, object]:
    kinds = ("bounding", "effective", "permitted", "inheritable", "ambient")
    return {"process": {"capabilities": {kind: list(capabilities) for kind in kinds}}}


def test_wrapper_drops_sys_resource_from_a_bundle_and_passes_arguments_through(
    wrapper: tuple[Path, Path], tmp_path: Path
):
    path, record = wrapper
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "config.json").write_text(json.dumps(_spec(CAPS)))
    args = ["--root", "/run/x", "--log", "/l.json", "create", "--bundle", str(bundle), "id1"]
    subprocess.run([str(path), *args], check=True)
    caps = json.loads((bundle / "config.json").read_text())["process"]["capabilities"]
    assert all(kept == ["CAP_CHOWN", "CAP_NET_ADMIN"] for kept in caps.values())
    assert json.loads(record.read_text()) == args


def test_wrapper_drops_sys_resource_from_an_exec_process_file(
    wrapper: tuple[Path, Path], tmp_path: Path
):
    path, record = wrapper
    process = tmp_path / "process.json"
    process.write_text(json.dumps(_spec(CAPS)["process"]))
    subprocess.run([str(path), "exec", "--process", str(process), "id1"], check=True)
    caps = json.loads(process.read_text())["capabilities"]
    assert "CAP_SYS_RESOURCE" not in caps["bounding"]
    assert json.loads(record.read_text()) == ["exec", "--process", str(process), "id1"]


def test_wrapper_leaves_other_commands_alone(wrapper: tuple[Path, Path], tmp_path: Path):
    path, record = wrapper
    (tmp_path / "config.json").write_text(json.dumps(_spec(CAPS)))
    subprocess.run([str(path), "state", "id1"], cwd=tmp_path, check=True)
    assert "CAP_SYS_RESOURCE" in (tmp_path / "config.json").read_text()
    assert json.loads(record.read_text()) == ["state", "id1"]


@pytest.mark.parametrize(
    ("bounding", "lacks"), [("000001fffeffffff", True), ("000001ffffffffff", False)]
)
def test_lacking_sys_resource_is_read_from_the_bounding_set(
    tmp_path: Path, bounding: str, lacks: bool
):
    status = tmp_path / "status"
    status.write_text(f"Name:\tx\nCapBnd:\t{bounding}\n")
    assert lacks_sys_resource(status) is lacks


def _settings(tmp_path: Path, state: str = "state", **env: str) -> KindSettings:
    config = DevConfig.from_env(
        {
            "KJOURNAL_DEV_CACHE": str(tmp_path / "cache"),
            "KJOURNAL_DEV_STATE_DIR": str(tmp_path / state),
        }
    )
    return KindSettings.from_env(config, env)


def test_expensive_things_live_in_the_cache_and_running_ones_in_the_state(tmp_path: Path):
    settings = _settings(tmp_path)
    cache, state = tmp_path / "cache", tmp_path / "state"
    for path in (
        settings.tools_dir,
        settings.docker_data_root,
        settings.rootfs_tar,
    ):
        assert path.is_relative_to(cache)
    for path in (settings.kubeconfig, settings.log_dir, settings.bin_dir):
        assert path.is_relative_to(state)


def test_each_state_dir_has_its_own_short_run_dir(tmp_path: Path):
    one, other = _settings(tmp_path, "one"), _settings(tmp_path, "other")
    assert one.run_dir != other.run_dir
    # unix sockets under it (containerd's included) must fit in 108 bytes
    assert len(str(one.run_dir / "exec/containerd/containerd-debug.sock")) < 100


def test_an_unknown_mode_is_one_clear_error(tmp_path: Path):
    with pytest.raises(DevError, match="KJOURNAL_DEV_KIND_MODE='online' is not one of"):
        _settings(tmp_path, KJOURNAL_DEV_KIND_MODE="online")
    assert _settings(tmp_path, KJOURNAL_DEV_KIND_MODE="offline").mode == "offline"


def test_offline_cluster_config_binds_loopback_and_uses_our_images():
    config = yaml.safe_load(cluster.config_yaml(offline=True, clamp_oom_score_adj=True))
    assert config["networking"] == {"apiServerAddress": "127.0.0.1", "disableDefaultCNI": True}
    patch = yaml.safe_load(config["kubeadmConfigPatches"][0])
    assert patch["etcd"]["local"]["imageTag"] == node_image.ETCD_TAG
    assert patch["dns"]["imageTag"] == node_image.COREDNS_TAG
    assert [node["role"] for node in config["nodes"]] == ["control-plane"]


def test_standard_node_image_gets_the_oom_score_clamp_only_where_needed():
    quirky = yaml.safe_load(cluster.config_yaml(offline=False, clamp_oom_score_adj=True))
    assert "restrict_oom_score_adj = true" in quirky["containerdConfigPatches"][0]
    assert quirky["networking"] == {"apiServerAddress": "127.0.0.1"}
    plain = yaml.safe_load(cluster.config_yaml(offline=False, clamp_oom_score_adj=False))
    assert "containerdConfigPatches" not in plain


_STORAGE_GO = """package nodeimage

const storageProvisionerImage = "docker.io/kindest/local-path-provisioner:v1"
const storageHelperImage = "docker.io/kindest/local-path-helper:v1"

const defaultStorageManifest = `
apiVersion: apps/v1
kind: Deployment
spec:
  replicas: 1
  template:
    spec:
      containers:
        - image: ` + storageProvisionerImage + `
          command: [local-path-provisioner, --helper-image, ` + storageHelperImage + `]
`
"""


def _kind_module(tmp_path: Path, source: str) -> Path:
    folder = tmp_path / "kind" / "pkg/build/nodeimage"
    folder.mkdir(parents=True)
    (folder / "const_storage.go").write_text(source)
    return tmp_path / "kind"


def test_storage_manifest_uses_our_images_and_starts_scaled_to_zero(tmp_path: Path):
    manifest = yaml.safe_load(node_image.storage_manifest(_kind_module(tmp_path, _STORAGE_GO)))
    spec = manifest["spec"]
    assert spec["replicas"] == 0
    container = spec["template"]["spec"]["containers"][0]
    assert container["image"] == node_image.LOCAL_PATH_IMAGE
    assert node_image.LOCAL_PATH_HELPER_IMAGE in container["command"]


def test_storage_manifest_of_another_shape_is_refused(tmp_path: Path):
    changed = _STORAGE_GO.replace("storageHelperImage + `", "helperImage + `")
    with pytest.raises(DevError, match="storage manifest changed shape"):
        node_image.storage_manifest(_kind_module(tmp_path, changed))


def test_steps_report_a_heartbeat_with_the_logs_last_line(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.2)
    lines: list[str] = []
    runner = progress.Progress(lines.append, tmp_path)
    runner.run("building thing", ["sh", "-c", "echo compiling part one; sleep 0.9"], "thing")
    assert lines[0] == "building thing ..."
    assert any(
        line.startswith("  building thing: 0.") and "compiling part one" in line for line in lines
    )
    assert lines[-1].startswith("building thing: done in ")


def test_a_failing_step_is_one_line_with_its_log(tmp_path: Path):
    runner = progress.Progress(lambda line: None, tmp_path)
    with pytest.raises(DevError) as failure:
        runner.run("building thing", ["sh", "-c", "echo boom; exit 3"], "thing")
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith("building thing failed (exit 3) after ")
    assert message.endswith(f"log: {tmp_path / 'thing.log'}")
    assert "boom" in (tmp_path / "thing.log").read_text()


def test_skaffold_is_built_only_on_demand():
    assert "skaffold" not in toolchain.OFFLINE_TOOLS
    assert "skaffold" not in toolchain.REGISTRY_TOOLS
    assert {"helm", "kind", "kubectl"} <= {
        binary for tool in toolchain.tools(toolchain.OFFLINE_TOOLS) for binary in tool.binaries
    }
    with pytest.raises(DevError, match="unknown tool 'kwok'"):
        toolchain.tools(["kwok"])


def test_kubernetes_binaries_carry_their_version():
    flags = toolchain._kubernetes_ldflags("v1.34.4")
    assert "-X k8s.io/component-base/version.gitVersion=v1.34.4" in flags
    assert "-X k8s.io/component-base/version.gitMinor=34" in flags


def test_engine_directories_are_removed_only_when_they_hold_nothing_of_others(tmp_path: Path):
    ours = tmp_path / "docker"
    (ours / "plugins").mkdir(parents=True)
    (ours / "key.json").write_text("{}")
    assert hostnet._remove_engine_dir(ours)
    assert not ours.exists()
    key = tmp_path / "etc-docker" / "key.json"
    key.parent.mkdir()
    key.write_text("{}")
    assert hostnet._remove_engine_dir(key)
    assert key.parent.exists()  # the package's directory stays
    theirs = tmp_path / "containerd"
    theirs.mkdir()
    (theirs / "someone-elses.sock").write_text("")
    assert not hostnet._remove_engine_dir(theirs)
    assert theirs.exists()


def test_image_labels_name_this_revision():
    labels = images.labels(find_repo_root())
    assert labels["VERSION"]
    assert labels["REVISION"] == "unknown" or len(labels["REVISION"].split("-")[0]) == 40


def test_cli_has_the_kind_and_images_commands():
    parser = build_parser()
    assert parser.parse_args(["kind", "tools", "--with-skaffold"]).with_skaffold
    assert parser.parse_args(["kind", "load", "writer", "reader"]).images == ["writer", "reader"]
    assert parser.parse_args(["images", "build"]).images == []
    assert parser.parse_args(["prebuild", "--early"]).early
    with pytest.raises(DevError, match="unknown image 'wirter'"):
        images.specs(["wirter"])


def _pod(name: str, ready: bool) -> dict[str, object]:
    return {
        "kind": "Pod",
        "metadata": {"name": name},
        "status": {"containerStatuses": [{"ready": ready}]},
    }


def _deployment(name: str, replicas: int, available: int) -> dict[str, object]:
    return {
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": available},
    }


def test_system_pods_count_as_ready_only_when_all_are():
    assert cluster._pods_ready([_pod("kube-proxy-abc", True)], "kube-proxy-")
    assert not cluster._pods_ready([_pod("kube-proxy-abc", False)], "kube-proxy-")
    assert not cluster._pods_ready([], "kube-proxy-")
    assert cluster._deployment_available([_deployment("coredns", 2, 2)], "coredns")
    assert not cluster._deployment_available([_deployment("coredns", 2, 1)], "coredns")
    # scaled to zero (our storage manifest before kube-proxy runs) is not "available"
    assert not cluster._deployment_available(
        [_deployment("local-path-provisioner", 0, 0)], "local-path-provisioner"
    )


def test_network_policy_enforcement_runs_kube_router_from_the_node_image():
    documents = list(yaml.safe_load_all(network_policy.manifest()))
    daemonset = next(d for d in documents if d["kind"] == "DaemonSet")
    assert daemonset["metadata"]["name"] == network_policy.DAEMONSET
    spec = daemonset["spec"]["template"]["spec"]
    containers = [*spec["initContainers"], *spec["containers"]]
    assert {c["image"] for c in containers} == {node_image.KUBE_ROUTER_IMAGE}
    assert {c["imagePullPolicy"] for c in containers} == {"Never"}  # nothing is pulled
    assert node_image.KUBE_ROUTER_IMAGE in node_image.node_images()
    assert "kube-router" in toolchain.OFFLINE_TOOLS
    args = spec["containers"][0]["args"]
    assert {"--run-firewall=true", "--run-router=false", "--run-service-proxy=false"} <= set(args)


def _daemonset(name: str, desired: int, ready: int) -> dict[str, object]:
    return {
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "status": {"desiredNumberScheduled": desired, "numberReady": ready},
    }


def test_network_policy_enforcement_counts_as_ready_only_when_every_pod_is():
    assert network_policy.daemonset_ready([_daemonset("kube-router", 1, 1)])
    assert not network_policy.daemonset_ready([_daemonset("kube-router", 1, 0)])
    assert not network_policy.daemonset_ready([_daemonset("kube-router", 0, 0)])
    assert not network_policy.daemonset_ready([_daemonset("kube-proxy", 1, 1)])


def test_an_engine_that_cannot_be_installed_is_one_clear_line(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("kjournal_dev.kind.packages.shutil.which", lambda name: None)
    runner = progress.Progress(lambda line: None, tmp_path)
    with pytest.raises(DevError) as failure:
        packages.ensure(runner, {"docker.io": tmp_path / "no-dockerd"}, "the Docker engine")
    assert str(failure.value) == (
        "the Docker engine needs docker.io, which is not installed and cannot be installed here "
        "(no apt-get): install it, then run again"
    )


def test_kind_env_puts_the_toolchain_before_the_shells_own_path(tmp_path: Path, monkeypatch):
    """Not this process's PATH: under `uv run` that holds the virtualenv and pyenv's folders."""
    monkeypatch.setenv("PATH", "/venv/bin:/usr/bin")
    config = DevConfig.from_env(
        {"KJOURNAL_DEV_CACHE": str(tmp_path / "cache"), "KJOURNAL_DEV_STATE_DIR": str(tmp_path)}
    )
    tool = KindTool(config, lambda line: None)
    lines = tool.env_lines()
    assert lines[0] == f'export PATH={tool.settings.bin_dir}:"$PATH"'
    assert not any("/venv/bin" in line for line in lines)
    assert [line.split("=")[0] for line in lines[1:]] == [
        "export DOCKER_HOST",
        "export DOCKER_BUILDKIT",
        "export KUBECONFIG",
    ]


def test_the_release_next_steps_are_the_documented_ones_on_ports_of_their_own():
    from kjournal_dev.kind import release

    docs = (find_repo_root() / "docs" / "kubernetes.md").read_text()
    lines = [line.strip() for line in release.next_steps()]
    forwards = [line for line in lines if line.startswith("kubectl") and "port-forward" in line]
    assert len(forwards) == 3
    for line in forwards:
        assert line in docs, line
    local = {int(line.split()[-2].split(":")[0]) for line in forwards}
    defaults = DevConfig.from_env({})
    taken = {defaults.writer_port, defaults.reader_port, defaults.replicator_port}
    assert local == {18081, 18082, 19400}
    assert not local & taken
    assert set(release.RELEASE_IMAGES) <= {spec.name for spec in images.IMAGES}


def test_the_release_next_steps_show_the_whole_system_work():
    """An append, a read, the replication status, the topic feed and the replicator's metrics,
    each through a forward the steps start, and every one of them in the docs too."""
    from kjournal_dev.kind import release

    docs = (find_repo_root() / "docs" / "kubernetes.md").read_text()
    text = "\n".join(release.next_steps())
    for wanted in (
        "curl -s -X POST http://127.0.0.1:18081/v1/journals/journal/order-1/events",
        "curl -s http://127.0.0.1:18082/v1/journals/journal/order-1/events",
        "curl -s http://127.0.0.1:18082/v1/topics/journal/replication",
        "curl -s http://127.0.0.1:18082/v1/topics/journal/events",
        "curl -s http://127.0.0.1:19400/metrics",
        "helm test kjournal -n kjournal",
    ):
        assert wanted in text, wanted
        assert wanted in docs, wanted
    assert "kill $(jobs -p)" in text  # the forwards are the user's to stop


def test_dev_storage_secrets_are_what_the_dev_cassandra_mounts_and_the_values_name():
    """The dev Cassandra requires authentication: storage.yaml mounts every role's Secret where
    the role step looks for it, the values give the reader, the replicator and the schema hook
    their role and the writer none, and passwords are generated, never fixed."""
    from kjournal_dev.kind import dev_storage

    root = find_repo_root()
    documents = list(yaml.safe_load_all((root / dev_storage.STORAGE_MANIFEST).read_text()))
    statefulset = next(
        d for d in documents if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "cassandra"
    )
    volume = next(
        v for v in statefulset["spec"]["template"]["spec"]["volumes"] if v["name"] == "roles"
    )
    mounted = {
        source["secret"]["name"]: {item["path"] for item in source["secret"]["items"]}
        for source in volume["projected"]["sources"]
    }
    assert mounted == {
        role.secret: {f"{role.folder}/username", f"{role.folder}/password"}
        for role in dev_storage.ROLES
    }
    by_component = {"reader": "read", "replicator": "write", "migrate": "ddl"}
    folders = {role.folder: role.secret for role in dev_storage.ROLES}
    for values_file in ("skaffold/values-kind.yaml", "tests/e2e/values-e2e.yaml"):
        values = yaml.safe_load((root / values_file).read_text())
        for component, folder in by_component.items():
            assert values[component]["cassandraSecret"]["name"] == folders[folder], values_file
        assert "cassandraSecret" not in values.get("writer", {}), values_file
    first, second = (
        dev_storage.secret_manifest(dev_storage.ROLES[1])["stringData"] for _ in range(2)
    )
    assert first["username"] == second["username"] == "kjournal_migrator"
    assert first["password"] != second["password"]
    assert len(first["password"]) >= 24


def test_kind_up_release_takes_a_namespace():
    args = build_parser().parse_args(["kind", "up", "--release", "--namespace", "shop"])
    assert (args.release, args.namespace) == (True, "shop")
    assert build_parser().parse_args(["kind", "up"]).release is False


class _FakeEngine:
    """An engine that runs, whose `docker` is a script recording its arguments; `ps` lists
    the containers in `nodes`."""

    def __init__(self, tmp_path: Path, nodes: list[str]) -> None:
        self.calls = tmp_path / "docker-calls"
        self.script = tmp_path / "docker"
        self.script.write_text(
            f"#!{sys.executable}\nimport sys\n"
            f"open({str(self.calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
            f"if sys.argv[1] == 'ps': print({chr(10).join(nodes)!r})\n"
        )
        self.script.chmod(0o755)

    def running(self) -> object:
        return object()

    def env(self) -> dict[str, str]:
        return {}

    def docker(self, *args: str) -> list[str]:
        return [str(self.script), *args]


def test_down_removes_the_node_containers_even_without_kind_in_this_build_cache(tmp_path: Path):
    """`kind down` run with another KJOURNAL_DEV_BUILD_CACHE than `kind up` finds no kind binary;
    the cluster's node containers still go (by kind's label), so a later engine on that data
    root does not restart them."""
    settings = _settings(tmp_path)
    report = progress.Progress(lambda line: None, tmp_path / "logs")
    engine = _FakeEngine(tmp_path, ["abc123"])
    chain = toolchain.Toolchain(settings, report)
    assert not chain.path("kind").is_file()
    done = cluster.Cluster(settings, report, engine, chain).delete()  # type: ignore[arg-type]
    assert done == ["removed the node container(s) of cluster kjournal"]
    calls = engine.calls.read_text().splitlines()
    assert calls == [
        "ps -a -q --filter label=io.x-k8s.kind.cluster=kjournal",
        "rm -f -v abc123",
    ]
    (tmp_path / "none").mkdir()
    nothing = _FakeEngine(tmp_path / "none", [])
    assert cluster.Cluster(settings, report, nothing, chain).delete() == []  # type: ignore[arg-type]


class _SlowProbes(progress.Progress):
    """Probes of `docker version` that hang past their timeout `hanging` times, then answer."""

    def __init__(self, log_dir: Path, hanging: int) -> None:
        super().__init__(lambda line: None, log_dir)
        self.hanging = hanging
        self.probes = 0

    def capture(self, cmd: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.probes += 1
        if self.probes <= self.hanging:
            raise DevError(f"`{' '.join(cmd[:3])} ...` did not finish within 15 s")
        return subprocess.CompletedProcess(list(cmd), 0, "27.5.1\n", "")


def test_a_docker_probe_that_hangs_while_the_engine_starts_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy host: the daemon starting, `docker version` hung past its 15 s twice (this failed
    every containers test of a CI run); the engine is ready once a probe answers."""
    monkeypatch.setattr("kjournal_dev.kind.engine.process.is_running", lambda pid: True)
    monkeypatch.setattr("kjournal_dev.kind.engine.time.sleep", lambda seconds: None)
    probes = _SlowProbes(tmp_path / "logs", hanging=2)
    engine_module.Engine(_settings(tmp_path), probes)._wait_ready(pid=1)
    assert probes.probes == 3
