"""The kind toolchain, built once from Go modules into the cache: Kubernetes' binaries, etcd,
kind, crictl, coredns, local-path-provisioner, helm, (on demand) skaffold, and pause from its C
source. Nothing is downloaded but Go modules; `bin/.versions.json` records what each binary is,
so a version bump rebuilds exactly what changed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev import gobuild
from kjournal_dev.errors import DevError
from kjournal_dev.kind import versions
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.settings import KindSettings

_MANIFEST = ".versions.json"

BUILD_HEADROOM_GB = 8.0
"""Free disk below which Go's build cache is dropped before the next tool's build: about what
the largest build (Kubernetes: its modules and compiled packages) adds (docs/images.md)."""

KUBERNETES_COMMANDS = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-proxy",
    "kubelet",
    "kubeadm",
    "kubectl",
)


@dataclass(frozen=True)
class Tool:
    name: str
    version: str
    binaries: tuple[str, ...]
    build: Callable[[Toolchain, Tool], None]


class Toolchain:
    def __init__(self, settings: KindSettings, progress: Progress) -> None:
        self.settings = settings
        self.progress = progress
        self.bin_dir = settings.bin_dir

    # --- what is there ---
    def path(self, binary: str) -> Path:
        return self.bin_dir / binary

    def _manifest(self) -> dict[str, str]:
        try:
            loaded = json.loads((self.bin_dir / _MANIFEST).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        return {str(k): str(v) for k, v in loaded.items()}

    def _record(self, tool: Tool) -> None:
        manifest = self._manifest()
        manifest.update(dict.fromkeys(tool.binaries, tool.version))
        tmp = self.bin_dir / (_MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
        tmp.replace(self.bin_dir / _MANIFEST)

    def is_built(self, tool: Tool) -> bool:
        manifest = self._manifest()
        return all(
            manifest.get(binary) == tool.version and self.path(binary).is_file()
            for binary in tool.binaries
        )

    def missing(self, names: Iterable[str]) -> list[Tool]:
        return [tool for tool in tools(names) if not self.is_built(tool)]

    def ensure(self, names: Iterable[str]) -> None:
        """Build each named tool that is missing or at another version, then drop Go's caches."""
        if not self.missing(names):
            return
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        self.go()  # fail early, in one line, if there is no Go
        cache_dir = self.settings.cache_dir
        with gobuild.exclusive(cache_dir):
            for tool in self.missing(names):  # again: another process may have built some
                free = gobuild.free_gb(cache_dir)
                if free < BUILD_HEADROOM_GB:
                    self.progress.report(
                        f"{free:.1f} GB free: dropping Go's build cache before building {tool.name}"
                    )
                    gobuild.drop_build_cache(cache_dir)
                tool.build(self, tool)
                self._record(tool)
            gobuild.drop_caches(cache_dir)

    # --- Go ---
    def go(self) -> str:
        return gobuild.find_go("the kind toolchain")

    def go_env(self) -> dict[str, str]:
        return gobuild.go_env(self.settings.cache_dir, self.bin_dir, self.go())

    def run_go(
        self, what: str, args: Sequence[str], log_name: str, cwd: Path | None = None
    ) -> None:
        if args and args[0] in ("build", "install"):
            # -v: each package as it is compiled, so the heartbeat shows where a build is.
            args = [args[0], "-v", *args[1:]]
        self.progress.run(what, [self.go(), *args], log_name, env=self.go_env(), cwd=cwd)

    def module_dir(self, module: str, version: str) -> Path:
        """Download a module (once) and return its directory in the module cache."""
        result = self.progress.capture(
            [self.go(), "mod", "download", "-json", f"{module}@{version}"],
            env=self.go_env(),
            cwd=self.settings.kind_cache,
            timeout=900,
        )
        return Path(json.loads(result.stdout)["Dir"])

    def install(self, what: str, package: str, version: str, log_name: str) -> None:
        self.run_go(
            what,
            ["install", "-trimpath", "-ldflags=-s -w", f"{package}@{version}"],
            log_name,
            cwd=self.settings.kind_cache,
        )


# --- recipes ---


def _kubernetes_module(chain: Toolchain) -> Path:
    """A wrapper module requiring k8s.io/kubernetes, with each staging module it replaces by a
    relative path (which only works inside its own repository) pointed at the published v0.X.Y."""
    version = versions.KUBERNETES
    work = chain.settings.src_dir / f"kubernetes-{version}"
    if (work / "go.sum").is_file():
        return work
    work.mkdir(parents=True, exist_ok=True)
    chain.settings.kind_cache.mkdir(parents=True, exist_ok=True)
    gomod = chain.module_dir("k8s.io/kubernetes", version) / "go.mod"
    edit = chain.progress.capture(
        [chain.go(), "mod", "edit", "-json", str(gomod)], env=chain.go_env(), cwd=work
    )
    staging_version = "v0." + version.split(".", 1)[1]  # v1.34.4 → v0.34.4
    staged = sorted(
        entry["Old"]["Path"]
        for entry in json.loads(edit.stdout).get("Replace") or []
        if str(entry["New"]["Path"]).startswith("./staging/")
    )
    lines = [
        "module kjournal.dev/kubernetes-build",
        "",
        "go 1.24",
        "",
        f"require k8s.io/kubernetes {version}",
        "",
        *(f"replace {path} => {path} {staging_version}" for path in staged),
        "",
    ]
    (work / "go.mod").write_text("\n".join(lines))
    imports = "\n".join(f'\t_ "k8s.io/kubernetes/cmd/{cmd}"' for cmd in KUBERNETES_COMMANDS)
    (work / "tools.go").write_text(
        "//go:build tools\n\npackage tools\n\nimport (\n" + imports + "\n)\n"
    )
    chain.run_go(
        f"resolving Kubernetes {version} modules", ["mod", "tidy"], "go-mod-kubernetes", work
    )
    return work


def _kubernetes_ldflags(version: str) -> str:
    major, minor = version.lstrip("v").split(".")[:2]
    values = {
        "gitVersion": version,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
    }
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [f"-X {package}.{name}={value}" for name, value in values.items()]
    return " ".join(flags)


def _build_kubernetes(chain: Toolchain, tool: Tool) -> None:
    work = _kubernetes_module(chain)
    chain.run_go(
        f"building Kubernetes {tool.version} ({', '.join(tool.binaries)})",
        [
            "build",
            "-trimpath",
            f"-ldflags={_kubernetes_ldflags(tool.version)}",
            "-o",
            str(chain.bin_dir) + "/",
            *(f"k8s.io/kubernetes/cmd/{cmd}" for cmd in tool.binaries),
        ],
        f"build-{tool.name}",
        work,
    )


def _build_etcd(chain: Toolchain, tool: Tool) -> None:
    """etcd's own go.mod replaces its sibling modules by path, so `go install` refuses it; a
    wrapper `main` that calls etcdmain builds the same server."""
    work = chain.settings.src_dir / f"etcd-{tool.version}"
    if not (work / "go.sum").is_file():
        work.mkdir(parents=True, exist_ok=True)
        (work / "go.mod").write_text(
            f"module kjournal.dev/etcd-build\n\ngo 1.24\n\n"
            f"require go.etcd.io/etcd/server/v3 {tool.version}\n"
        )
        (work / "main.go").write_text(
            "package main\n\n"
            'import (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\n'
            "func main() { etcdmain.Main(os.Args) }\n"
        )
        chain.run_go(f"resolving etcd {tool.version} modules", ["mod", "tidy"], "go-mod-etcd", work)
    chain.run_go(
        f"building etcd {tool.version}",
        ["build", "-trimpath", "-ldflags=-s -w", "-o", str(chain.path("etcd")), "."],
        "build-etcd",
        work,
    )


def _go_install(package: str) -> Callable[[Toolchain, Tool], None]:
    def build(chain: Toolchain, tool: Tool) -> None:
        chain.install(
            f"building {tool.name} {tool.version}", package, tool.version, f"build-{tool.name}"
        )

    return build


def _build_skaffold(chain: Toolchain, tool: Tool) -> None:
    """skaffold's go.mod has replace directives (go install refuses them): build inside a copy of
    its module, where they apply."""
    module = "github.com/GoogleContainerTools/skaffold/v2"
    source = chain.module_dir(module, tool.version)
    work = chain.settings.src_dir / f"skaffold-{tool.version}"
    if not (work / "go.mod").is_file():
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(source, work)
        for path in (work, *work.rglob("*")):
            path.chmod(path.stat().st_mode | 0o200)
    chain.run_go(
        f"building skaffold {tool.version}",
        [
            "build",
            "-trimpath",
            f"-ldflags=-s -w -X {module}/pkg/skaffold/version.version={tool.version}",
            "-o",
            str(chain.path("skaffold")),
            "./cmd/skaffold",
        ],
        "build-skaffold",
        work,
    )


def _build_pause(chain: Toolchain, tool: Tool) -> None:
    """The sandbox container's `pause`, compiled statically from Kubernetes' own C source."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise DevError("gcc is needed to compile pause for the kind node: apt-get install gcc")
    source = (
        chain.module_dir("k8s.io/kubernetes", versions.KUBERNETES) / "build/pause/linux/pause.c"
    )
    chain.progress.run(
        f"compiling pause {tool.version}",
        [
            gcc,
            "-Os",
            "-Wall",
            "-Werror",
            "-static",
            f"-DVERSION=v{tool.version}-kjournal",
            "-o",
            str(chain.path("pause")),
            str(source),
        ],
        "build-pause",
    )


_KUBERNETES_NODE = tuple(cmd for cmd in KUBERNETES_COMMANDS if cmd != "kubectl")

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool("kubernetes", versions.KUBERNETES, (*_KUBERNETES_NODE, "kubectl"), _build_kubernetes),
        Tool("kubectl", versions.KUBERNETES, ("kubectl",), _build_kubernetes),
        Tool("etcd", versions.ETCD, ("etcd",), _build_etcd),
        Tool("kind", versions.KIND, ("kind",), _go_install("sigs.k8s.io/kind")),
        Tool(
            "crictl",
            versions.CRICTL,
            ("crictl",),
            _go_install("sigs.k8s.io/cri-tools/cmd/crictl"),
        ),
        Tool("coredns", versions.COREDNS, ("coredns",), _go_install("github.com/coredns/coredns")),
        Tool(
            "local-path-provisioner",
            versions.LOCAL_PATH_PROVISIONER,
            ("local-path-provisioner",),
            _go_install("github.com/rancher/local-path-provisioner"),
        ),
        Tool("helm", versions.HELM, ("helm",), _go_install("helm.sh/helm/v3/cmd/helm")),
        Tool("skaffold", versions.SKAFFOLD, ("skaffold",), _build_skaffold),
        Tool("pause", versions.PAUSE, ("pause",), _build_pause),
    )
}

OFFLINE_TOOLS = (
    "kubernetes",
    "etcd",
    "kind",
    "crictl",
    "coredns",
    "local-path-provisioner",
    "helm",
    "pause",
)
"""What a cluster with no registry needs (skaffold is built only on demand)."""

REGISTRY_TOOLS = ("kind", "kubectl", "helm")
"""What a cluster from the standard kind node image needs on the host."""


def tools(names: Iterable[str]) -> list[Tool]:
    try:
        return [TOOLS[name] for name in names]
    except KeyError as exc:
        raise DevError(f"unknown tool {exc.args[0]!r}: one of {', '.join(TOOLS)}") from None


def binary_version(path: Path) -> str:
    """What a built binary says it is (for `status`)."""
    for args in (["version", "--short"], ["version"], ["--version"]):
        try:
            out = subprocess.run(
                [str(path), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except OSError:
            return "?"
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    return "?"
