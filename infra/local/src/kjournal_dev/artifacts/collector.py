"""The OpenTelemetry Collector of the local platform, built once from Go modules into the cache.

The collector builder (go.opentelemetry.io/collector/cmd/builder) assembles a distribution with
exactly what `up` needs: the OTLP receiver, the batch processor and the file exporter. Go modules
come from the Go module proxy; nothing else is downloaded. The build is recorded by a marker
naming the versions, so a version bump rebuilds and a second `up` does not. The build is one entry
of the per-machine build cache (kjournal_dev/build_cache.py): built in a temporary sibling and
renamed into place once the binary exists, so every checkout on the machine reuses it and none
sees half of it.

Go's caches go under the build cache and are dropped once the binary exists (gobuild.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from kjournal_dev import build_cache
from kjournal_dev.artifacts import gobuild
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError

__all__ = ["COLLECTOR_VERSION", "built_collector", "ensure_collector"]

COLLECTOR_VERSION = "0.165.0"
"""Of the builder and the components (the contrib file exporter is released with the core)."""
PROVIDERS_VERSION = "1.71.0"  # the stable confmap providers released with it

MANIFEST = f"""\
dist:
  name: otelcol-kjournal
  description: OpenTelemetry Collector of the kjournal local platform
  output_path: ./src
  version: {COLLECTOR_VERSION}
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v{COLLECTOR_VERSION}
processors:
  - gomod: go.opentelemetry.io/collector/processor/batchprocessor v{COLLECTOR_VERSION}
exporters:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v{COLLECTOR_VERSION}
providers:
  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v{PROVIDERS_VERSION}
  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v{PROVIDERS_VERSION}
"""


def _home(config: DevConfig) -> Path:
    return config.build_cache_dir / "otelcol" / f"otelcol-kjournal-{COLLECTOR_VERSION}"


def _versions() -> str:
    return json.dumps({"collector": COLLECTOR_VERSION, "providers": PROVIDERS_VERSION})


def built_collector(config: DevConfig) -> Path | None:
    """The collector binary, if it was built for this version."""
    home = _home(config)
    binary = home / "src" / "otelcol-kjournal"
    try:
        marker = json.loads((home / build_cache.MARKER).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return binary if marker == json.loads(_versions()) and binary.is_file() else None


def _run(args: Sequence[str], cwd: Path, env: dict[str, str], log: Path) -> int:
    with log.open("ab") as out:
        out.write(f"$ {' '.join(args)}\n".encode())
        out.flush()
        return subprocess.run(
            list(args), cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
        ).returncode


def ensure_collector(config: DevConfig, report: Callable[[str], None] | None = None) -> Path:
    """The collector binary, built first if needed (a few minutes, once per version)."""
    found = built_collector(config)
    if found is not None:
        return found
    with gobuild.exclusive(config.build_cache_dir):
        found = built_collector(config)  # another process may have built it meanwhile
        if found is None:
            home = _home(config)
            shutil.rmtree(home, ignore_errors=True)  # complete, but of other providers
            with build_cache.entry(home, _versions()) as work:
                log = home.with_name(home.name + ".build.log")  # kept when the build fails
                log.unlink(missing_ok=True)
                _build(config, work, log, report)
            found = home / "src" / "otelcol-kjournal"
            gobuild.drop_caches(config.build_cache_dir)
    return found


def _build(config: DevConfig, home: Path, log: Path, report: Callable[[str], None] | None) -> None:
    """Build the collector in `home` (the entry's temporary folder)."""
    bin_dir = home / "bin"
    go = gobuild.find_go(
        "the OpenTelemetry Collector (or set KJOURNAL_DEV_COLLECTOR=false to run without it: the "
        "services then export no spans)"
    )
    env = gobuild.go_env(config.build_cache_dir, bin_dir, go)
    if report is not None:
        report(
            f"building the OpenTelemetry Collector {COLLECTOR_VERSION} from Go modules "
            f"(once; a few minutes), log: {log}"
        )
    builder = f"go.opentelemetry.io/collector/cmd/builder@v{COLLECTOR_VERSION}"
    if _run([go, "install", "-trimpath", builder], home, env, log) != 0:
        raise DevError(f"could not build the collector builder ({builder}); see {log}")
    (home / "manifest.yaml").write_text(MANIFEST)
    ocb = [str(bin_dir / "builder"), "--config", "manifest.yaml"]
    if _run([*ocb, "--skip-compilation"], home, env, log) != 0:
        # The builder's `go mod tidy` also resolves the components' test-only dependencies,
        # and a proxy may not serve all of them (here: 403 for a test module of the file
        # exporter). The build needs none of them: tidy tolerating that, then compile.
        if not (home / "src" / "go.mod").is_file():
            raise DevError(f"the collector builder failed; see {log}")
        if _run([go, "mod", "tidy", "-e", "-compat=1.25"], home / "src", env, log) != 0:
            raise DevError(f"resolving the collector's Go modules failed; see {log}")
    ocb += ["--skip-generate", "--skip-get-modules"]
    if _run(ocb, home, env, log) != 0:
        raise DevError(f"compiling the collector failed; see {log}")
    binary = home / "src" / "otelcol-kjournal"
    if not binary.is_file():
        raise DevError(f"the collector builder produced no binary; see {log}")
