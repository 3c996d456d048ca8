"""The `kind` and `images` commands, composed: what `up`, `down`, `status`, `load`, `tools` and
`images build` do, in order."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kjournal_dev.artifacts import gobuild
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.kind import base_image
from kjournal_dev.kind import node_image
from kjournal_dev.kind import toolchain
from kjournal_dev.kind.cluster import Cluster
from kjournal_dev.kind.cluster import registry_reachable
from kjournal_dev.kind.engine import Engine
from kjournal_dev.kind.images import ImageBuilder
from kjournal_dev.kind.images import ImageSpec
from kjournal_dev.kind.images import specs
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.progress import Reporter
from kjournal_dev.kind.progress import elapsed
from kjournal_dev.kind.settings import KindSettings

# A cold build of the toolchain needs room for Go's caches while it builds (they are dropped
# afterwards, toolchain.py), then the node image and the cluster's images; docs/images.md.
_COLD_NEED_GB = toolchain.BUILD_HEADROOM_GB
_WARM_NEED_GB = 3


@dataclass(frozen=True)
class StatusReport:
    lines: list[str]
    healthy: bool


class KindTool:
    def __init__(self, config: DevConfig, report: Reporter) -> None:
        self.config = config
        self.settings = KindSettings.from_env(config)
        self.progress = Progress(report, self.settings.log_dir)
        self.engine = Engine(self.settings, self.progress)
        self.chain = toolchain.Toolchain(self.settings, self.progress)
        self.cluster = Cluster(self.settings, self.progress, self.engine, self.chain)
        self.images = ImageBuilder(config, self.settings, self.progress, self.engine)
        self._mode_file = self.settings.kind_state / "mode.json"

    # --- offline or registry ---
    def offline(self) -> bool:
        mode = self.settings.mode
        if mode != "auto":
            return mode == "offline"
        try:
            return bool(json.loads(self._mode_file.read_text())["offline"])
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        offline = not registry_reachable()
        self.progress.report(
            "no container registry reachable: everything is built from Debian packages and Go "
            "modules"
            if offline
            else "a container registry answers: using kind's standard node image"
        )
        self.settings.kind_state.mkdir(parents=True, exist_ok=True)
        self._mode_file.write_text(json.dumps({"offline": offline}))
        return offline

    def _tools(self, offline: bool) -> tuple[str, ...]:
        return toolchain.OFFLINE_TOOLS if offline else toolchain.REGISTRY_TOOLS

    # --- commands ---
    def build_tools(self, with_skaffold: bool = False) -> list[Path]:
        names = [*self._tools(self.offline()), *(["skaffold"] if with_skaffold else [])]
        if self.chain.missing(names):
            gobuild.require_disk(
                self.settings.build_cache_dir, _COLD_NEED_GB, "building the kind toolchain"
            )
        self.chain.ensure(names)
        return [self.chain.path(b) for tool in toolchain.tools(names) for b in tool.binaries]

    def start_engine(self) -> None:
        """The engine and the base image every build starts FROM."""
        offline = self.offline()
        gobuild.require_disk(self.settings.docker_data_root, _WARM_NEED_GB, "the Docker engine")
        self.engine.start()
        base_image.ensure(self.engine, self.progress, self.settings, offline)

    def up(self, with_skaffold: bool = False) -> None:
        started = time.monotonic()
        offline = self.offline()
        self.build_tools(with_skaffold)
        self.start_engine()
        if self.cluster.exists():
            self.progress.report(f"cluster {self.settings.cluster_name} already running (reused)")
            return
        image = (
            node_image.ensure(self.engine, self.progress, self.settings, self.chain)
            if offline
            else None
        )
        self.cluster.create(offline, image)
        self.progress.report(f"kind up: done in {elapsed(time.monotonic() - started)}")

    def down(self) -> list[str]:
        done = self.cluster.delete()  # without a running engine: only /lib/modules, if ours
        done += self.engine.stop()
        self._mode_file.unlink(missing_ok=True)
        return done

    def build_images(self, names: Iterable[str]) -> list[ImageSpec]:
        wanted = specs(names)
        self.start_engine()
        for spec in wanted:
            self.images.build(spec)
        self.images.prune()
        return wanted

    def load(self, names: Iterable[str]) -> list[ImageSpec]:
        if not self.cluster.exists():
            raise DevError("no kind cluster is running: `kjournal-dev kind up` first")
        wanted = self.build_images(names)
        self.cluster.load([spec.image for spec in wanted])
        return wanted

    def status(self) -> StatusReport:
        lines = []
        state = self.engine.running()
        lines.append(
            f"engine    {'running' if state else 'stopped':<8} "
            + (f"pid {state.pid}  {self.settings.docker_host}" if state else "")
        )
        built = [
            tool.name for tool in toolchain.tools(toolchain.TOOLS) if self.chain.is_built(tool)
        ]
        lines.append(f"toolchain {self.settings.tools_dir}: {', '.join(built) or 'nothing built'}")
        cluster = self.cluster.status() if state else None
        if cluster is None or not cluster.exists:
            lines.append(f"cluster   {self.settings.cluster_name}: not running")
        else:
            lines.append(
                f"cluster   {self.settings.cluster_name}: kubeconfig {self.settings.kubeconfig}"
            )
            lines += ["  " + line for line in cluster.nodes.splitlines()]
        healthy = bool(cluster and cluster.exists and " Ready " in cluster.nodes)
        return StatusReport(lines, healthy)

    def env_lines(self) -> list[str]:
        """Exports for the user's shell: the toolchain's folder put in front of the shell's own
        PATH (not this process's, which `uv run` extended with the virtualenv), the engine and
        the kubeconfig."""
        env = self.engine.env()
        bin_dir = shlex.quote(str(self.settings.bin_dir))
        return [
            f'export PATH={bin_dir}:"$PATH"',
            *(
                f"export {name}={shlex.quote(env[name])}"
                for name in ("DOCKER_HOST", "DOCKER_BUILDKIT", "KUBECONFIG")
            ),
        ]
