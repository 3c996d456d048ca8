"""What the operators' commands share (`python -m kjournal_replicator.expiry` and `.check`, and
`kjournal expire` and `kjournal check` through ops_cli.py): the log on stderr (stdout holds the
report), the settings, the run's metrics arguments, `main`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kjournal_service.logs import configure_job_logging
from kjournal_service.settings import invalid_settings
from pydantic import ValidationError

__all__ = ["add_metrics_arguments", "command_main", "configure_stderr_logging", "read_settings"]

S = TypeVar("S")


def configure_stderr_logging() -> None:
    """Log lines on stderr, so that stdout holds the report alone."""
    configure_job_logging(sys.stderr, quiet=("aiokafka", "cassandra"))


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics-file", type=Path, help="write the run's metrics here")
    parser.add_argument("--pushgateway", help="push the run's metrics to this Pushgateway")


def read_settings(settings: Callable[[], S], log: logging.Logger) -> S | None:
    """The command's settings from the environment, or None once why not is logged (the command
    then exits 2)."""
    try:
        return settings()
    except ValidationError as exc:
        log.error("invalid settings:\n%s", invalid_settings(exc))
        return None


def command_main(
    prog: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    run_command: Callable[[argparse.Namespace], int],
    argv: list[str] | None,
) -> int:
    configure_stderr_logging()
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_arguments(parser)
    return run_command(parser.parse_args(argv))
