"""The kind node image, assembled with nothing pulled: what `kind build node-image` does, but with
every image it would pull built here.

1. kind's base image from Debian packages (assets/kind-base.Dockerfile, kind's own files from its
   Go module).
2. The images kubeadm and kind run, made from the binaries of the toolchain: FROM-nothing images
   for the control plane, etcd, coredns, pause and local-path-provisioner (`docker import` of a
   one-file tree), kube-proxy and kube-router on Debian (they need iptables and ipset).
3. A container of the base image gets kubeadm, kubelet, kubectl, `/kind/version`, the storage
   manifest and a kubeadm patch (coredns probed for readiness every second); its containerd
   imports the images above (pinned, so the kubelet's image garbage collection never removes
   them); `docker commit` makes it the node image.

The image carries a label with a hash of this recipe: changing a version or an asset rebuilds it.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kjournal_dev.errors import DevError
from kjournal_dev.kind import versions
from kjournal_dev.kind.engine import Engine
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.progress import elapsed
from kjournal_dev.kind.settings import KindSettings
from kjournal_dev.kind.toolchain import Toolchain

NODE_IMAGE = f"kjournal.local/kind-node:{versions.KUBERNETES}"
KIND_BASE_IMAGE = f"kjournal.local/kind-base:{versions.KIND}"
RECIPE_LABEL = "dev.kjournal.recipe"

# kubeadm v1.34 asks for etcd 3.6.5 and coredns v1.12.1; the cluster config points it at these.
ETCD_TAG = versions.ETCD.lstrip("v") + "-kjournal"
COREDNS_TAG = versions.COREDNS + "-kjournal"
LOCAL_PATH_IMAGE = f"kjournal.local/local-path-provisioner:{versions.LOCAL_PATH_PROVISIONER}"
LOCAL_PATH_HELPER_IMAGE = "kjournal.local/local-path-helper:bookworm"
KUBE_ROUTER_IMAGE = f"kjournal.local/kube-router:{versions.KUBE_ROUTER}"
"""NetworkPolicies in the offline cluster: kube-router's firewall alone (network_policy.py). Not
kube-network-policies: it queues each new connection to userspace with nftables' `queue`
statement, and kernels built without CONFIG_NFT_QUEUE (ours) refuse that rule; kube-router
needs only iptables, ipset and the physdev match."""

_PATH_ENV = "ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KUBEADM_PATCHES_DIR = "/kind/kubeadm-patches"
KUBEADM_PATCH = "corednsdeployment+strategic.yaml"


@dataclass(frozen=True)
class BinaryImage:
    """An image holding one static binary and nothing else."""

    name: str
    binary: str
    target: str  # path inside the image
    changes: tuple[str, ...] = ()


def _binary_images() -> list[BinaryImage]:
    registry = "registry.k8s.io"
    k8s = versions.KUBERNETES
    return [
        *(
            BinaryImage(f"{registry}/{name}:{k8s}", name, f"usr/local/bin/{name}", (_PATH_ENV,))
            for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
        ),
        BinaryImage(f"{registry}/etcd:{ETCD_TAG}", "etcd", "usr/local/bin/etcd", (_PATH_ENV,)),
        BinaryImage(
            f"{registry}/coredns/coredns:{COREDNS_TAG}",
            "coredns",
            "coredns",
            ('ENTRYPOINT ["/coredns"]',),
        ),
        BinaryImage(
            f"{registry}/pause:{versions.PAUSE}",
            "pause",
            "pause",
            ('ENTRYPOINT ["/pause"]', "USER 65535:65535"),
        ),
        BinaryImage(
            LOCAL_PATH_IMAGE,
            "local-path-provisioner",
            "usr/local/bin/local-path-provisioner",
            (_PATH_ENV,),
        ),
    ]


def _aliases() -> dict[str, str]:
    """Extra names for images above: kind's containerd config names pause 3.10 as its sandbox."""
    return {
        f"registry.k8s.io/pause:{versions.KIND_SANDBOX_PAUSE}": f"registry.k8s.io/pause:{versions.PAUSE}",
        LOCAL_PATH_HELPER_IMAGE: versions.BASE_IMAGE,  # the helper pod needs only sh, mkdir, rm
    }


def _netfilter_images() -> dict[str, str]:
    """Images of one binary on Debian with iptables, nftables, conntrack and ipset: name → binary."""
    return {
        f"registry.k8s.io/kube-proxy:{versions.KUBERNETES}": "kube-proxy",
        KUBE_ROUTER_IMAGE: "kube-router",
    }


def node_images() -> list[str]:
    return [
        *(image.name for image in _binary_images()),
        *_netfilter_images(),
        *_aliases(),
    ]


def _asset(name: str) -> bytes:
    return resources.files("kjournal_dev.kind").joinpath(f"assets/{name}").read_bytes()


def recipe_hash() -> str:
    digest = hashlib.sha256()
    for module in ("versions.py", "node_image.py"):
        digest.update(resources.files("kjournal_dev.kind").joinpath(module).read_bytes())
    for asset in (
        "kind-base.Dockerfile",
        "netfilter.Dockerfile",
        "10-bridge.conflist",
        KUBEADM_PATCH,
    ):
        digest.update(_asset(asset))
    return digest.hexdigest()[:16]


def _label(engine: Engine, progress: Progress, image: str) -> str | None:
    probe = progress.capture(
        engine.docker(
            "image", "inspect", "--format", f'{{{{index .Config.Labels "{RECIPE_LABEL}"}}}}', image
        ),
        env=engine.env(),
        check=False,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def is_current(engine: Engine, progress: Progress) -> bool:
    return _label(engine, progress, NODE_IMAGE) == recipe_hash()


def ensure(engine: Engine, progress: Progress, settings: KindSettings, chain: Toolchain) -> str:
    if is_current(engine, progress):
        return NODE_IMAGE
    started = time.monotonic()
    work = settings.src_dir / "node-image"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    kind_module = chain.module_dir("sigs.k8s.io/kind", versions.KIND)
    _build_kind_base(engine, progress, chain, kind_module, work / "kind-base")
    _build_component_images(engine, progress, chain, work)
    manifest = work / "default-storage.yaml"
    manifest.write_text(storage_manifest(kind_module))
    _assemble(engine, progress, chain, manifest)
    shutil.rmtree(work, ignore_errors=True)
    progress.report(f"node image {NODE_IMAGE} built in {elapsed(time.monotonic() - started)}")
    return NODE_IMAGE


def _build_kind_base(
    engine: Engine, progress: Progress, chain: Toolchain, kind_module: Path, context: Path
) -> None:
    shutil.copytree(kind_module / "images/base/files", context / "files")
    for path in (context, *context.rglob("*")):
        path.chmod(path.stat().st_mode | 0o200)
    shutil.copy2(chain.path("crictl"), context / "crictl")
    (context / "Dockerfile").write_bytes(_asset("kind-base.Dockerfile"))
    (context / "10-bridge.conflist").write_bytes(_asset("10-bridge.conflist"))
    progress.run(
        f"building kind's base image {KIND_BASE_IMAGE} from Debian packages",
        engine.docker("build", "--progress=plain", "-t", KIND_BASE_IMAGE, str(context)),
        "node-image",
        env=engine.env(),
    )


def _one_file_tar(source: Path, target: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        parts = Path(target).parts
        for depth in range(1, len(parts)):
            info = tarfile.TarInfo("/".join(parts[:depth]))
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(info)
        info = archive.gettarinfo(str(source), arcname=target)
        info.mode, info.uid, info.gid, info.uname, info.gname = 0o755, 0, 0, "root", "root"
        with source.open("rb") as stream:
            archive.addfile(info, stream)
    return buffer.getvalue()


def _build_component_images(
    engine: Engine, progress: Progress, chain: Toolchain, work: Path
) -> None:
    with progress.step("building the control plane, etcd, coredns, pause and storage images"):
        env = engine.env()
        for image in _binary_images():
            changes = [arg for change in image.changes for arg in ("--change", change)]
            result = subprocess.run(
                engine.docker("import", *changes, "-", image.name),
                input=_one_file_tar(chain.path(image.binary), image.target),
                capture_output=True,
                env=env,
                check=False,
            )
            if result.returncode != 0:
                raise DevError(
                    f"importing {image.name} failed: {result.stderr.decode(errors='replace').strip()}"
                )
        for alias, original in _aliases().items():
            progress.capture(engine.docker("tag", original, alias), env=env)
        for name, binary in _netfilter_images().items():
            context = work / binary
            context.mkdir()
            shutil.copy2(chain.path(binary), context / binary)
            (context / "Dockerfile").write_bytes(_asset("netfilter.Dockerfile"))
            progress.run(
                f"building {binary}'s image",
                engine.docker(
                    "build",
                    "--progress=plain",
                    "--build-arg",
                    f"BINARY={binary}",
                    "-t",
                    name,
                    str(context),
                ),
                "node-image",
                env=env,
                quiet=True,
            )


def storage_manifest(kind_module: Path) -> str:
    """kind's default StorageClass manifest (local-path-provisioner) with our images, its
    Deployment at zero replicas."""
    source = (kind_module / "pkg/build/nodeimage/const_storage.go").read_text()
    start = "const defaultStorageManifest = `"
    provisioner = "` + storageProvisionerImage + `"
    helper = "` + storageHelperImage + `"
    if start not in source or provisioner not in source or helper not in source:
        raise DevError(f"kind {versions.KIND}'s storage manifest changed shape: {kind_module}")
    # Fill in the two images the Go source concatenates, then cut the raw string at its end.
    source = source.replace(provisioner, LOCAL_PATH_IMAGE).replace(helper, LOCAL_PATH_HELPER_IMAGE)
    manifest = source.split(start, 1)[1].split("`", 1)[0]
    # Scaled up by `kind up` once kube-proxy runs (see cluster.Cluster._wait_system_pods).
    if manifest.count("replicas: 1\n") != 1:
        raise DevError(f"kind {versions.KIND}'s storage manifest changed shape: {kind_module}")
    return manifest.replace("replicas: 1\n", "replicas: 0\n").lstrip("\n")


def _assemble(engine: Engine, progress: Progress, chain: Toolchain, manifest: Path) -> None:
    env = engine.env()
    name = f"kjournal-node-build-{os.getpid()}"
    docker = engine.docker
    with progress.step(f"assembling the node image {NODE_IMAGE}"):
        progress.capture(docker("rm", "-f", name), env=env, check=False)
        progress.capture(
            docker(
                "run", "-d", "--name", name, "--entrypoint", "sleep", KIND_BASE_IMAGE, "infinity"
            ),
            env=env,
        )
        try:
            for binary in ("kubeadm", "kubelet", "kubectl"):
                progress.capture(
                    docker("cp", str(chain.path(binary)), f"{name}:/usr/bin/{binary}"), env=env
                )
            progress.capture(
                docker(
                    "exec",
                    name,
                    "chmod",
                    "0755",
                    "/usr/bin/kubeadm",
                    "/usr/bin/kubelet",
                    "/usr/bin/kubectl",
                ),
                env=env,
            )
            progress.capture(
                docker("exec", name, "mkdir", "-p", "/kind/manifests", KUBEADM_PATCHES_DIR), env=env
            )
            patch = resources.files("kjournal_dev.kind").joinpath(f"assets/{KUBEADM_PATCH}")
            with resources.as_file(patch) as patch_file:
                progress.capture(
                    docker("cp", str(patch_file), f"{name}:{KUBEADM_PATCHES_DIR}/{KUBEADM_PATCH}"),
                    env=env,
                )
            progress.capture(
                docker("cp", str(manifest), f"{name}:/kind/manifests/default-storage.yaml"), env=env
            )
            subprocess.run(
                docker("exec", "-i", name, "sh", "-c", "cat > /kind/version"),
                input=versions.KUBERNETES.encode(),
                env=env,
                check=True,
            )
            _import_images(engine, progress, name)
            progress.capture(
                docker(
                    "commit",
                    "--change",
                    'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
                    "--change",
                    f"LABEL {RECIPE_LABEL}={recipe_hash()}",
                    name,
                    NODE_IMAGE,
                ),
                env=env,
            )
        finally:
            progress.capture(docker("rm", "-f", name), env=env, check=False)


def _full_name(image: str) -> str:
    """containerd's name of a Docker image reference (`debian:x` → `docker.io/library/debian:x`)."""
    first = image.split("/", 1)[0]
    if "/" in image and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"docker.io/{image}" if "/" in image else f"docker.io/library/{image}"


def _import_images(engine: Engine, progress: Progress, container: str) -> None:
    """Start the build container's containerd, import every node image into its k8s.io namespace
    (pinned: the kubelet's image GC never removes them), stop it."""
    env = engine.env()
    docker = engine.docker
    progress.capture(
        docker("exec", container, "sh", "-c", "containerd >/var/log/containerd-import.log 2>&1 &"),
        env=env,
    )
    deadline = time.monotonic() + 60
    # kind's own probe, `ctr info`, does not exist in containerd 1.6's ctr.
    while progress.capture(
        docker("exec", container, "ctr", "version"), env=env, check=False
    ).returncode:
        if time.monotonic() > deadline:
            raise DevError("containerd did not start in the node image build container")
        time.sleep(0.5)
    save = subprocess.Popen(docker("save", *node_images()), stdout=subprocess.PIPE, env=env)
    assert save.stdout is not None
    try:
        progress.run(
            "importing the images into the node's containerd",
            docker(
                "exec",
                "-i",
                container,
                "ctr",
                "--namespace=k8s.io",
                "images",
                "import",
                "--all-platforms",
                "--no-unpack",
                "--digests",
                "-",
            ),
            "node-image",
            env=env,
            stdin=save.stdout,
            quiet=True,
        )
    finally:
        save.stdout.close()
        if save.wait() != 0:
            raise DevError("`docker save` of the node's images failed")
    # containerd 1.6's `ctr images import` has no --label: pin each image afterwards.
    for image in node_images():
        progress.capture(
            docker(
                "exec",
                container,
                "ctr",
                "--namespace=k8s.io",
                "images",
                "label",
                _full_name(image),
                "io.cri-containerd.pinned=pinned",
            ),
            env=env,
        )
    progress.capture(docker("exec", container, "pkill", "containerd"), env=env, check=False)
    for _ in range(50):
        alive = progress.capture(
            docker("exec", container, "pgrep", "-x", "containerd"), env=env, check=False
        )
        if alive.returncode != 0:
            break
        time.sleep(0.2)
