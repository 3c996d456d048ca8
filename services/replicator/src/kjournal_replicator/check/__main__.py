"""`python -m kjournal_replicator.check TOPIC ...`: compare Cassandra with the fold of Kafka.

Settings: the replicator's (`KJOURNAL_KAFKA__*`, `KJOURNAL_CASSANDRA__*`, `KJOURNAL_SPARK__*`:
the same source, the same master; docs/replicator.md). Prints the report (a table, or JSON) on
stdout, the log on stderr. Exit status: 0 the same (or, with --repair, everything repaired and
found the same afterwards), 1 something differs, 2 invalid settings or arguments, 3 the check
could not run (Kafka, Cassandra or Spark failed).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from kjournal.errors import KJournalError

from kjournal_replicator.check.job import CheckOptions
from kjournal_replicator.check.job import run_check
from kjournal_replicator.ops_command import add_metrics_arguments
from kjournal_replicator.ops_command import command_main
from kjournal_replicator.ops_command import read_settings
from kjournal_replicator.settings import ReplicatorSettings

__all__ = ["add_arguments", "main", "run_command"]

log = logging.getLogger("kjournal_replicator.check")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topics", nargs="+", metavar="TOPIC", help="journal topics to check")
    parser.add_argument(
        "--local",
        action="store_true",
        help="fold and compare in this process (a small topic) rather than as a Spark job",
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="rewrite what differs from the fold with the replicator's store code",
    )
    parser.add_argument(
        "--settle-s",
        type=float,
        default=30.0,
        help="how long a difference may take to resolve itself (a replicator mid-slice) before "
        "it counts (default 30)",
    )
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--json-file", type=Path, help="also write the JSON report here")
    add_metrics_arguments(parser)


def run_command(args: argparse.Namespace) -> int:
    settings = read_settings(ReplicatorSettings, log)
    if settings is None:
        return 2
    if args.settle_s < 0:
        log.error("--settle-s must not be negative")
        return 2
    options = CheckOptions(
        topics=tuple(args.topics),
        local=args.local,
        repair=args.repair,
        settle_s=args.settle_s,
        metrics_file=args.metrics_file,
        pushgateway=args.pushgateway,
    )
    try:
        reports = run_check(settings, options)
    except KJournalError as exc:
        log.error("the check could not run: %s", exc)
        return 3
    document = json.dumps([r.as_json() for r in reports], indent=2) + "\n"
    if args.json_file is not None:
        args.json_file.write_text(document)
    if args.format == "json":
        sys.stdout.write(document)
    else:
        sys.stdout.write("\n\n".join(report.table() for report in reports) + "\n")
    failed = [r for r in reports if r.differs and not r.clean_after_repair]
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    return command_main(
        "python -m kjournal_replicator.check",
        "Compare Cassandra with the fold of what Kafka still holds; --repair it.",
        add_arguments,
        run_command,
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
