"""`python -m kjournal_replicator.expiry [TOPIC ...]`: purge the journals whose expiry has come.

Topics and bounds default to `KJOURNAL_EXPIRY__*`; connections to `KJOURNAL_KAFKA__*` and
`KJOURNAL_CASSANDRA__*` (docs/configuration.md). Prints one line per topic (or the JSON report).
Exit status: 0 done (races included: they are logged and counted), 1 Kafka or Cassandra failed,
2 invalid settings or arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from kjournal.errors import KJournalError

from kjournal_replicator.expiry.job import ExpiryOptions
from kjournal_replicator.expiry.job import dumps
from kjournal_replicator.expiry.job import run_expiry
from kjournal_replicator.expiry.settings import ExpirySettings
from kjournal_replicator.ops_command import add_metrics_arguments
from kjournal_replicator.ops_command import command_main
from kjournal_replicator.ops_command import read_settings

__all__ = ["add_arguments", "main", "run_command"]

log = logging.getLogger("kjournal_replicator.expiry")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "topics",
        nargs="*",
        metavar="TOPIC",
        help="journal topics (default: KJOURNAL_EXPIRY__TOPICS)",
    )
    parser.add_argument("--lookback-days", type=int, help="expire_on dates looked up, up to today")
    parser.add_argument("--max-purges", type=int, help="purges per topic and run at most")
    parser.add_argument("--dry-run", action="store_true", help="decide, purge nothing")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    add_metrics_arguments(parser)


def run_command(args: argparse.Namespace) -> int:
    settings = read_settings(ExpirySettings, log)
    if settings is None:
        return 2
    job = settings.expiry
    options = ExpiryOptions(
        topics=tuple(args.topics) or job.topics,
        lookback_days=args.lookback_days or job.lookback_days,
        max_purges=job.max_purges if args.max_purges is None else args.max_purges,
        dry_run=args.dry_run,
        metrics_file=args.metrics_file,
        pushgateway=args.pushgateway,
    )
    if options.lookback_days < 1 or options.max_purges < 0:
        log.error("--lookback-days must be at least 1, --max-purges not negative")
        return 2
    try:
        reports = asyncio.run(run_expiry(settings, options))
    except KJournalError as exc:
        log.error("expiry failed: %s", exc)
        return 1
    if args.format == "json":
        sys.stdout.write(dumps(reports) + "\n")
    else:
        for report in reports:
            sys.stdout.write(report.summary() + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    return command_main(
        "python -m kjournal_replicator.expiry",
        "Purge, through Kafka, the journals whose expire_on date has come.",
        add_arguments,
        run_command,
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
