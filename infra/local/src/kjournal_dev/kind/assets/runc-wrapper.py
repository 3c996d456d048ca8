#!/usr/bin/python3 -IS
"""OCI runtime wrapper that dockerd uses as its default runtime on hosts whose capability bounding
set lacks CAP_SYS_RESOURCE (some microVMs). `docker run --privileged` (every kind node) asks runc
for every capability and fails with "unable to apply caps: operation not permitted"; this drops
CAP_SYS_RESOURCE from the bundle's config.json (create, run) or the --process file (exec), then
execs the real runc with the same arguments. Installed by `kjournal-dev kind`, not run by hand."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

REAL_RUNC = "@REAL_RUNC@"
DROPPED = "CAP_SYS_RESOURCE"
# runc's global options that take a separate value (the subcommand comes after them).
VALUED_GLOBALS = {"--root", "--log", "--log-format", "--criu", "--rootless"}


def subcommand_and_options(args: list[str]) -> tuple[str | None, dict[str, str]]:
    index, command = 0, None
    while index < len(args):
        arg = args[index]
        if command is None:
            if arg in VALUED_GLOBALS:
                index += 2
                continue
            if not arg.startswith("-"):
                command = arg
        index += 1
    options: dict[str, str] = {}
    for index, arg in enumerate(args):
        for name, short in (("--bundle", "-b"), ("--process", "-p")):
            if arg in (name, short) and index + 1 < len(args):
                options[name] = args[index + 1]
            elif arg.startswith(name + "="):
                options[name] = arg.split("=", 1)[1]
    return command, options


def without_capability(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        kind: [cap for cap in caps if cap != DROPPED] if isinstance(caps, list) else caps
        for kind, caps in capabilities.items()
    }


def rewrite(path: str, locate: Callable[[dict[str, Any]], Any]) -> None:
    try:
        with open(path) as stream:
            spec = json.load(stream)
    except (OSError, ValueError):
        return
    holder = locate(spec)
    if not isinstance(holder, dict) or not isinstance(holder.get("capabilities"), dict):
        return
    holder["capabilities"] = without_capability(holder["capabilities"])
    with open(path, "w") as stream:
        json.dump(spec, stream)


def main() -> None:
    args = sys.argv[1:]
    command, options = subcommand_and_options(args)
    if command in ("create", "run"):
        bundle = options.get("--bundle", ".")
        rewrite(os.path.join(bundle, "config.json"), lambda spec: spec.get("process"))
    elif command == "exec" and "--process" in options:
        rewrite(options["--process"], lambda spec: spec)
    os.execv(REAL_RUNC, [REAL_RUNC, *args])


main()
