"""The kind toolchain, built once from Go modules into the build cache: Kubernetes' binaries,
etcd, kind, crictl, coredns, local-path-provisioner, helm, kube-router (NetworkPolicies), (on demand) skaffold, and pause from its
C source. Nothing is downloaded but Go modules. Each tool and version is one build-cache entry
(`tools/<name>-<version>/`, build_cache.py), so checkouts at other versions on the same machine
keep theirs and a half-built tool is never used; the binaries a checkout uses are linked into its
state's `bin/` (on PATH for kind, kubectl and helm).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev import build_cache
from kjournal_dev.artifacts import gobuild
from kjournal_dev.errors import DevError
from kjournal_dev.kind import versions
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.settings import KindSettings

_LEGACY_MANIFEST = ".versions.json"

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
    build: Callable[[Toolchain, Tool, Path], None]
    """Builds the binaries into the folder it is given."""


class Toolchain:
    def __init__(self, settings: KindSettings, progress: Progress) -> None:
        self.settings = settings
        self.progress = progress

    # --- what is there ---
    def entry(self, tool: Tool) -> Path:
        return self.settings.tools_dir / f"{tool.name}-{tool.version}"

    def path(self, binary: str) -> Path:
        """The binary from the first built tool that makes it (else where the first would)."""
        makers = [tool for tool in TOOLS.values() if binary in tool.binaries]
        if not makers:
            raise DevError(f"no tool of the kind toolchain builds {binary!r}")
        built = next((tool for tool in makers if self.is_built(tool)), makers[0])
        return self.entry(built) / binary

    def is_built(self, tool: Tool) -> bool:
        return build_cache.complete(self.entry(tool))

    def missing(self, names: Iterable[str]) -> list[Tool]:
        return [tool for tool in tools(names) if not self.is_built(tool)]

    def ensure(self, names: Iterable[str]) -> None:
        """Build each named tool that is missing at its version, drop Go's caches, and link the
        binaries into the state's `bin/`."""
        names = list(names)
        if self.missing(names):
            go = self.go()  # fail early, in one line, if there is no Go
            root = self.settings.build_cache_dir
            self.progress.report(
                f"building {', '.join(tool.name for tool in self.missing(names))} from Go modules "
                f"downloaded from {gobuild.module_proxy(go)} into {gobuild.go_root(root)} "
                "(dropped once the binaries are built)"
            )
            with gobuild.exclusive(root):
                for tool in self.missing(names):  # again: another process may have built some
                    if self._adopt_legacy(tool):
                        continue
                    free = gobuild.free_gb(root)
                    if free < BUILD_HEADROOM_GB:
                        self.progress.report(
                            f"{free:.1f} GB free: dropping Go's build cache before building "
                            f"{tool.name}"
                        )
                        gobuild.drop_build_cache(root)
                    with build_cache.entry(self.entry(tool), tool.version) as out:
                        tool.build(self, tool, out)
                gobuild.drop_caches(root)
        self._link(tools(names))

    def _adopt_legacy(self, tool: Tool) -> bool:
        """Take the tool from the flat `kind/bin/` of earlier versions of this tool, if that holds
        it at this version (saves a rebuild of up to 40 minutes after an upgrade)."""
        legacy = self.settings.kind_cache / "bin"
        try:
            recorded = json.loads((legacy / _LEGACY_MANIFEST).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return False
        if not all(
            recorded.get(binary) == tool.version and (legacy / binary).is_file()
            for binary in tool.binaries
        ):
            return False
        with build_cache.entry(self.entry(tool), tool.version) as out:
            for binary in tool.binaries:
                shutil.copy2(legacy / binary, out / binary)
        return True

    def _link(self, wanted: Iterable[Tool]) -> None:
        links = self.settings.bin_dir
        links.mkdir(parents=True, exist_ok=True)
        for tool in wanted:
            for binary in tool.binaries:
                target, link = self.path(binary), links / binary
                if link.is_symlink() and Path(os.readlink(link)) == target:
                    continue
                # A name of this process's own: two processes (a prebuild and a test's `kind up`)
                # may link the same binary at once, and each rename must find its own link.
                fresh = links / f".{binary}.{os.getpid()}.link"
                fresh.unlink(missing_ok=True)
                fresh.symlink_to(target)
                fresh.replace(link)

    # --- Go ---
    def go(self) -> str:
        return gobuild.find_go("the kind toolchain")

    def go_env(self, out: Path | None = None) -> dict[str, str]:
        """Go's environment; `go install` puts binaries into `out`."""
        return gobuild.go_env(
            self.settings.build_cache_dir, out or self.settings.tools_dir, self.go()
        )

    def run_go(
        self,
        what: str,
        args: Sequence[str],
        log_name: str,
        cwd: Path | None = None,
        out: Path | None = None,
    ) -> None:
        if args and args[0] in ("build", "install"):
            # -v: each package as it is compiled, so the heartbeat shows where a build is.
            args = [args[0], "-v", *args[1:]]
        self.progress.run(what, [self.go(), *args], log_name, env=self.go_env(out), cwd=cwd)

    def module_dir(self, module: str, version: str) -> Path:
        """Download a module (once) and return its directory in the module cache."""
        self.settings.kind_cache.mkdir(parents=True, exist_ok=True)
        result = self.progress.capture(
            [self.go(), "mod", "download", "-json", f"{module}@{version}"],
            env=self.go_env(),
            cwd=self.settings.kind_cache,
            timeout=900,
        )
        return Path(json.loads(result.stdout)["Dir"])

    def install(self, what: str, package: str, version: str, log_name: str, out: Path) -> None:
        self.run_go(
            what,
            ["install", "-trimpath", "-ldflags=-s -w", f"{package}@{version}"],
            log_name,
            cwd=self.settings.kind_cache,
            out=out,
        )


# --- recipes ---


IN_KUBERNETES_MODULE = {
    # tool → (its module, version, main package)
    "kube-router": (
        "github.com/cloudnativelabs/kube-router/v2",
        versions.KUBE_ROUTER,
        "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router",
    ),
    "local-path-provisioner": (
        "github.com/rancher/local-path-provisioner",
        versions.LOCAL_PATH_PROVISIONER,
        "github.com/rancher/local-path-provisioner",
    ),
}
"""Tools built inside the Kubernetes wrapper module rather than with `go install`: they use the
Kubernetes libraries (client-go, api, apimachinery) at older versions of their own, which would
be compiled again for each; here Go's minimal version selection gives them Kubernetes' own, so
the build compiles those packages once (and the other requirements they share, at Kubernetes'
versions; neither raises a version Kubernetes pins beyond a patch)."""


def _kubernetes_module(chain: Toolchain) -> Path:
    """A wrapper module requiring k8s.io/kubernetes (and the tools of IN_KUBERNETES_MODULE), with
    each staging module Kubernetes replaces by a relative path (which only works inside its own
    repository) pointed at the published v0.X.Y."""
    version = versions.KUBERNETES
    extra = sorted(
        f"{module} {module_version}" for module, module_version, _ in IN_KUBERNETES_MODULE.values()
    )
    digest = hashlib.sha256("\n".join(extra).encode()).hexdigest()[:8]
    work = chain.settings.src_dir / f"kubernetes-{version}-{digest}"
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
        "require (",
        f"\tk8s.io/kubernetes {version}",
        *(f"\t{line}" for line in extra),
        ")",
        "",
        *(f"replace {path} => {path} {staging_version}" for path in staged),
        "",
    ]
    (work / "go.mod").write_text("\n".join(lines))
    packages = [f"k8s.io/kubernetes/cmd/{cmd}" for cmd in KUBERNETES_COMMANDS]
    packages += [package for _, _, package in IN_KUBERNETES_MODULE.values()]
    imports = "\n".join(f'\t_ "{package}"' for package in packages)
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


def _build_kubernetes(chain: Toolchain, tool: Tool, out: Path) -> None:
    work = _kubernetes_module(chain)
    chain.run_go(
        f"building Kubernetes {tool.version} ({', '.join(tool.binaries)})",
        [
            "build",
            "-trimpath",
            f"-ldflags={_kubernetes_ldflags(tool.version)}",
            "-o",
            str(out) + "/",
            *(f"k8s.io/kubernetes/cmd/{cmd}" for cmd in tool.binaries),
        ],
        f"build-{tool.name}",
        work,
    )


def _build_in_kubernetes_module(chain: Toolchain, tool: Tool, out: Path) -> None:
    """One of IN_KUBERNETES_MODULE, built on its own (local-path-provisioner imports logrus as
    `Sirupsen/logrus`, Kubernetes as `sirupsen/logrus`: Go refuses both in one build) but from
    the same module and Go build cache as Kubernetes."""
    _, _, package = IN_KUBERNETES_MODULE[tool.name]
    chain.run_go(
        f"building {tool.name} {tool.version} (with Kubernetes' libraries)",
        ["build", "-trimpath", "-ldflags=-s -w", "-o", str(out / tool.binaries[0]), package],
        f"build-{tool.name}",
        _kubernetes_module(chain),
    )


def _build_etcd(chain: Toolchain, tool: Tool, out: Path) -> None:
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
        ["build", "-trimpath", "-ldflags=-s -w", "-o", str(out / "etcd"), "."],
        "build-etcd",
        work,
    )


COREDNS_PLUGINS = (
    # kubeadm's Corefile: errors, health, ready, kubernetes, prometheus (the metrics plugin),
    # forward, cache, loop, reload, loadbalance
    "cache",
    "errors",
    "forward",
    "health",
    "kubernetes",
    "loadbalance",
    "loop",
    "metrics",
    "ready",
    "reload",
    # and what one edits into a dev cluster's Corefile to debug or stub names
    "hosts",
    "log",
    "rewrite",
)
"""The plugins the cluster's coredns is built with. `go install github.com/coredns/coredns`
builds all 60 (the Azure, AWS, Google Cloud, Nomad, etcd, dnstap and tracing SDKs with them:
15 % of a cold toolchain's CPU here); CoreDNS's own way to choose them is a main package
importing coremain and the plugins wanted. A Corefile naming another plugin fails at start with
the plugin's name."""


def _build_coredns(chain: Toolchain, tool: Tool, out: Path) -> None:
    work = chain.settings.src_dir / f"coredns-{tool.version}"
    if not (work / "go.sum").is_file():
        (work / "cmd" / "coredns").mkdir(parents=True, exist_ok=True)
        (work / "go.mod").write_text(
            f"module kjournal.dev/coredns-build\n\ngo 1.24\n\n"
            f"require github.com/coredns/coredns {tool.version}\n"
        )
        imports = "".join(
            f'\t_ "github.com/coredns/coredns/plugin/{plugin}"\n' for plugin in COREDNS_PLUGINS
        )
        (work / "cmd" / "coredns" / "main.go").write_text(
            "// CoreDNS with the plugins kjournal-dev's kind cluster uses (toolchain.py).\n"
            "package main\n\nimport (\n"
            + imports
            + '\n\t"github.com/coredns/coredns/coremain"\n)\n\n'
            "func main() { coremain.Run() }\n"
        )
        chain.run_go(
            f"resolving coredns {tool.version} modules", ["mod", "tidy"], "go-mod-coredns", work
        )
    chain.run_go(
        f"building coredns {tool.version} ({len(COREDNS_PLUGINS)} plugins)",
        ["build", "-trimpath", "-ldflags=-s -w", "-o", str(out / "coredns"), "./cmd/coredns"],
        "build-coredns",
        work,
    )


def _go_install(package: str) -> Callable[[Toolchain, Tool, Path], None]:
    def build(chain: Toolchain, tool: Tool, out: Path) -> None:
        chain.install(
            f"building {tool.name} {tool.version}", package, tool.version, f"build-{tool.name}", out
        )

    return build


def _build_skaffold(chain: Toolchain, tool: Tool, out: Path) -> None:
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
            str(out / "skaffold"),
            "./cmd/skaffold",
        ],
        "build-skaffold",
        work,
    )


def _build_pause(chain: Toolchain, tool: Tool, out: Path) -> None:
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
            str(out / "pause"),
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
        Tool("coredns", versions.COREDNS, ("coredns",), _build_coredns),
        Tool(
            "local-path-provisioner",
            versions.LOCAL_PATH_PROVISIONER,
            ("local-path-provisioner",),
            _build_in_kubernetes_module,
        ),
        Tool("helm", versions.HELM, ("helm",), _go_install("helm.sh/helm/v3/cmd/helm")),
        Tool("kube-router", versions.KUBE_ROUTER, ("kube-router",), _build_in_kubernetes_module),
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
    "kube-router",
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
