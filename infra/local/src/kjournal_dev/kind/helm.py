"""helm, as the kind toolchain builds it (from Go modules, into the cache), run with its own
config and cache directories under kjournal-dev's state (never the user's ~/.config/helm)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.progress import Reporter
from kjournal_dev.kind.settings import KindSettings
from kjournal_dev.kind.toolchain import Toolchain

__all__ = ["KUBERNETES_VERSIONS", "Helm"]

# The Kubernetes minors the chart is validated against (`helm template --kube-version`,
# kubernetes-validate): the oldest still supported upstream through the one kind runs here.
KUBERNETES_VERSIONS = ("1.30.0", "1.31.0", "1.32.0", "1.33.0", "1.34.0")


class Helm:
    def __init__(self, config: DevConfig, report: Reporter) -> None:
        settings = KindSettings.from_env(config)
        self.chain = Toolchain(settings, Progress(report, settings.log_dir))
        self.home = settings.kind_state / "helm"

    def binary(self) -> Path:
        """helm, built first if the toolchain lacks it (a few minutes, once)."""
        self.chain.ensure(["helm"])
        return self.chain.path("helm")

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "HELM_CONFIG_HOME": str(self.home / "config"),
            "HELM_CACHE_HOME": str(self.home / "cache"),
            "HELM_DATA_HOME": str(self.home / "data"),
            **(extra or {}),
        }

    def run(
        self, args: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """helm with these arguments; the result whatever the exit code."""
        return subprocess.run(
            [str(self.binary()), *args],
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def template(
        self,
        chart: Path,
        *,
        release: str = "kjournal",
        namespace: str = "kjournal",
        values: Iterable[Path] = (),
        sets: Mapping[str, str] | None = None,
        kube_version: str = KUBERNETES_VERSIONS[-1],
        extra: Sequence[str] = (),
    ) -> str:
        """The rendered manifests; DevError with helm's own message if rendering fails."""
        args = ["template", release, str(chart), "--namespace", namespace]
        args += ["--kube-version", kube_version, *extra]
        for path in values:
            args += ["--values", str(path)]
        for key, value in (sets or {}).items():
            args += ["--set", f"{key}={value}"]
        result = self.run(args)
        if result.returncode != 0:
            raise DevError(result.stderr.strip() or result.stdout.strip())
        return result.stdout
