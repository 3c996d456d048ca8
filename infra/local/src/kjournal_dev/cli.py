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
import time

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.generate import cli as generate_cli
from kjournal_dev.kind import cli as kind_cli
from kjournal_dev.platform import cli as platform_cli
from kjournal_dev.platform.lifecycle import Platform
from kjournal_dev.security import cli as security_cli
from kjournal_dev.traces import cli as traces_cli


def _report(line: str) -> None:
    print(f"kjournal-dev: {line}", flush=True)


def _prebuild(platform: Platform, args: argparse.Namespace) -> int:
    """Build now what the chart tools, `up` and `kind up` would build on first use: helm (the
    chart tests' first need), the collector (which `up` needs), then (unless --early) the rest of
    the kind toolchain and the Debian base tarball. Go's caches stay between these builds and go
    once at the end. Each lands in the build cache whole or not at all, and a later step that
    needs one waits for a build under way instead of starting its own."""
    from kjournal_dev.artifacts import gobuild
    from kjournal_dev.artifacts.collector import ensure_collector
    from kjournal_dev.kind import base_image
    from kjournal_dev.kind.helm import Helm
    from kjournal_dev.kind.tool import KindTool

    started = time.monotonic()
    with gobuild.caches_kept(platform.config.build_cache_dir):
        print(Helm(platform.config, _report).binary(), flush=True)
        if platform.config.collector:
            print(ensure_collector(platform.config, _report), flush=True)
        if not args.early:
            tool = KindTool(platform.config, _report)
            for path in tool.build_tools():
                print(path, flush=True)
            if tool.offline():
                print(base_image.ensure_rootfs(tool.progress, tool.settings), flush=True)
    _report(f"prebuild done in {time.monotonic() - started:.0f}s")
    return 0


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
