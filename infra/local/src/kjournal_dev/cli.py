"""`kjournal-dev`: each tool registers its own commands.

platform/   up | status | down | logs: Kafka, Cassandra, an OpenTelemetry Collector and
            kjournal's writer, reader and replicator on loopback
security/   token (and the secured platform's users, roles, ACLs and TLS)
traces/     trace: the collector's spans as a waterfall
generate/   settings-docs | metrics-docs | chart-values | chart-manifests
kind/       kind ... | images ...: images and a kind cluster, built offline
prebuild    here: what the chart tools, `up` and `kind up` would build on first use
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import TYPE_CHECKING

from kjournal_dev import build_cache
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.generate import cli as generate_cli
from kjournal_dev.kind import cli as kind_cli
from kjournal_dev.platform import cli as platform_cli
from kjournal_dev.platform.lifecycle import Platform
from kjournal_dev.security import cli as security_cli
from kjournal_dev.traces import cli as traces_cli

if TYPE_CHECKING:
    from kjournal_dev.kind.tool import KindTool


def _report(line: str) -> None:
    print(f"kjournal-dev: {line}", flush=True)


def _prebuild(platform: Platform, args: argparse.Namespace) -> int:
    """Build now what the chart tools, `up` and `kind up` would build on first use: helm (the
    chart tests' first need), the collector (which `up` needs), then (unless --early) the rest of
    the kind toolchain. Go's caches stay between these builds and go once at the end. Beside
    them, in a thread, what is mostly waiting on the network: the platform's jars (secured
    platform's included) and (unless --early) the Debian base tarball. Each lands in the build
    cache whole or not at all, and a later step that needs one waits for a build under way
    instead of starting its own."""
    from kjournal_dev.artifacts import gobuild
    from kjournal_dev.artifacts.collector import ensure_collector
    from kjournal_dev.kind.helm import Helm
    from kjournal_dev.kind.tool import KindTool

    started = time.monotonic()
    config = platform.config
    tool = None if args.early else KindTool(config, _report)
    debian = tool if tool is not None and tool.offline() else None
    downloads = threading.Thread(target=_prefetch, args=(config, debian), daemon=True)
    downloads.start()
    with gobuild.caches_kept(config.build_cache_dir):
        print(Helm(config, _report).binary(), flush=True)
        if config.collector:
            print(ensure_collector(config, _report), flush=True)
        if tool is not None:
            for path in tool.build_tools():
                print(path, flush=True)
    downloads.join()
    _report(f"prebuild done in {time.monotonic() - started:.0f}s")
    return 0


def _prefetch(config: DevConfig, debian: KindTool | None) -> None:
    """The jars every platform of the suites needs, then (with a tool) the Debian base tarball;
    a failure is reported and left to the step that needs it."""
    from kjournal_dev.artifacts import maven
    from kjournal_dev.kind import base_image

    bundles = [
        maven.kafka_bundle(),
        maven.cassandra_bundle(),
        maven.spark_kafka_bundle(config.spark_version),
        maven.kafka_tools_bundle(),
    ]
    try:
        missing = [b for b in bundles if not build_cache.complete(b.folder(config))]
        if missing:
            _report(
                f"fetching from {config.maven_repo_url or maven.MAVEN_CENTRAL} with Maven: "
                + ", ".join(f"{b.name} {b.version}" for b in missing)
            )
        for bundle in missing:
            maven.fetch(bundle, config)
        if debian is not None:
            print(base_image.ensure_rootfs(debian.progress, debian.settings), flush=True)
    except DevError as err:
        _report(f"prefetch: {err} (left to the step that needs it)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kjournal-dev",
        description="Run real Kafka and Cassandra on 127.0.0.1 for kjournal. "
        "Settings come from KJOURNAL_DEV_* variables (see README).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    platform_cli.register(sub)
    traces_cli.register(sub)
    generate_cli.register(sub)
    prebuild = sub.add_parser(
        "prebuild",
        help="build ahead into the build cache what the chart tests, `up` and `kind up` build on "
        "first use: helm, the collector, then the rest of the kind toolchain and the Debian base",
    )
    prebuild.add_argument(
        "--early",
        action="store_true",
        help="only what the first test suites need: helm and the collector",
    )
    prebuild.set_defaults(run=_prebuild)
    kind_cli.register(sub)
    security_cli.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        platform = Platform(DevConfig.from_env())
        code: int = args.run(platform, args)
    except DevError as err:
        print(f"kjournal-dev: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
