"""argparse wiring of `kjournal-dev kind ...` and `kjournal-dev images ...` (registered by
kjournal_dev.cli)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.kind.images import IMAGES
from kjournal_dev.kind.progress import elapsed
from kjournal_dev.kind.release import NAMESPACE
from kjournal_dev.kind.release import install_release
from kjournal_dev.kind.release import next_steps
from kjournal_dev.kind.tool import KindTool


def _report(line: str) -> None:
    print(f"kjournal-dev: {line}", flush=True)


def _tool(args: argparse.Namespace) -> KindTool:
    return KindTool(DevConfig.from_env(), _report)


def _up(platform: Any, args: argparse.Namespace) -> int:
    tool = _tool(args)
    tool.up(with_skaffold=args.release)
    if args.release:
        started = time.monotonic()
        install_release(tool, args.namespace)
        _report(f"release: done in {elapsed(time.monotonic() - started)}")
        for line in next_steps(args.namespace):
            print(line)
        return 0
    for line in tool.env_lines():
        print(line)
    return 0


def _storage(platform: Any, args: argparse.Namespace) -> int:
    from kjournal_dev.kind import dev_storage

    tool = _tool(args)
    if not tool.cluster.exists():
        raise DevError("no kind cluster is running: `kjournal-dev kind up` first")
    dev_storage.apply(tool, args.namespace)
    return 0


def _down(platform: Any, args: argparse.Namespace) -> int:
    done = _tool(args).down()
    print("; ".join(done) if done else "nothing was running")
    return 0


def _status(platform: Any, args: argparse.Namespace) -> int:
    report = _tool(args).status()
    for line in report.lines:
        print(line)
    return 0 if report.healthy else 1


def _load(platform: Any, args: argparse.Namespace) -> int:
    for spec in _tool(args).load(args.images):
        print(f"loaded {spec.image}")
    return 0


def _tools(platform: Any, args: argparse.Namespace) -> int:
    for path in _tool(args).build_tools(with_skaffold=args.with_skaffold):
        print(path)
    return 0


def _env(platform: Any, args: argparse.Namespace) -> int:
    for line in _tool(args).env_lines():
        print(line)
    return 0


def _images_build(platform: Any, args: argparse.Namespace) -> int:
    tool = _tool(args)
    for spec in tool.build_images(args.images):
        size = tool.images.size_mb(spec.image)
        print(f"{spec.image:<28} {size:8.1f} MB" if size else spec.image)
    return 0


def _images_list(platform: Any, args: argparse.Namespace) -> int:
    tool = _tool(args)
    if tool.engine.running() is None:
        print("the Docker engine is not running (`kjournal-dev images build` starts it)")
        return 1
    for spec in IMAGES:
        size = tool.images.size_mb(spec.image)
        print(f"{spec.image:<28} " + (f"{size:8.1f} MB" if size else "not built"))
    return 0


def register(sub: Any) -> None:
    """Add the `kind` and `images` command groups to kjournal-dev's subparsers."""
    names = [spec.name for spec in IMAGES]
    kind = sub.add_parser(
        "kind",
        help="a kind cluster on this machine (built from Debian packages and Go modules when no "
        "registry is reachable)",
    )
    commands = kind.add_subparsers(dest="kind_command", required=True)
    up = commands.add_parser(
        "up", help="build what is missing (once, into the cache), start dockerd and the cluster"
    )
    up.add_argument(
        "--release",
        action="store_true",
        help="also build skaffold (in the same pass as the other tools), load the images, start "
        "the dev Kafka and Cassandra and install the chart with skaffold/values-kind.yaml",
    )
    up.add_argument(
        "--namespace",
        default=NAMESPACE,
        help=f"the release's namespace with --release (default: {NAMESPACE})",
    )
    up.set_defaults(run=_up)
    storage = commands.add_parser(
        "storage",
        help="the dev Kafka and Cassandra in a namespace of the cluster, Cassandra's role Secrets "
        "generated when missing (what --release and skaffold's kind profile start)",
    )
    storage.add_argument("--namespace", default=NAMESPACE, help=f"default: {NAMESPACE}")
    storage.set_defaults(run=_storage)
    commands.add_parser(
        "down",
        help="delete the cluster, stop dockerd by PID, remove its bridges and firewall rules",
    ).set_defaults(run=_down)
    commands.add_parser(
        "status", help="engine, toolchain and cluster; exit 1 unless the node is Ready"
    ).set_defaults(run=_status)
    load = commands.add_parser(
        "load", help="build kjournal's images and load them into the cluster"
    )
    load.add_argument(
        "images", nargs="*", metavar="IMAGE", help=f"any of {', '.join(names)} (default: all)"
    )
    load.set_defaults(run=_load)
    tools = commands.add_parser("tools", help="only build the toolchain (kind, kubectl, helm, ...)")
    tools.add_argument(
        "--with-skaffold", action="store_true", help="also build skaffold (not needed by `up`)"
    )
    tools.set_defaults(run=_tools)
    commands.add_parser(
        "env", help="print PATH, DOCKER_HOST and KUBECONFIG exports for this shell"
    ).set_defaults(run=_env)

    images = sub.add_parser("images", help="kjournal's container images (docs/images.md)")
    image_commands = images.add_subparsers(dest="images_command", required=True)
    build = image_commands.add_parser("build", help="build images (starts dockerd if needed)")
    build.add_argument(
        "images", nargs="*", metavar="IMAGE", help=f"any of {', '.join(names)} (default: all)"
    )
    build.set_defaults(run=_images_build)
    image_commands.add_parser("list", help="the images and their sizes").set_defaults(
        run=_images_list
    )
