"""The operators' commands this package adds to `kjournal` (entry point group `kjournal.ops`):
`kjournal expire` and `kjournal check`, which reach Kafka and Cassandra directly with the
`KJOURNAL_KAFKA__*` and `KJOURNAL_CASSANDRA__*` settings rather than the HTTP services."""

from __future__ import annotations

import argparse
from typing import Any
from typing import Protocol

from kjournal_replicator.check import __main__ as check_command
from kjournal_replicator.expiry import __main__ as expiry_command
from kjournal_replicator.ops_command import configure_stderr_logging

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[Any]) -> None:
    _add(
        sub,
        "expire",
        expiry_command,
        help="purge, through Kafka, the journals whose expire_on date has come",
        description="Purge, through Kafka, the journals whose expire_on date has come "
        "(docs/operations.md). Settings: KJOURNAL_KAFKA__*, KJOURNAL_CASSANDRA__*, "
        "KJOURNAL_EXPIRY__*.",
    )
    _add(
        sub,
        "check",
        check_command,
        help="compare Cassandra with the fold of Kafka's records, journal by journal (--repair)",
        description="Compare Cassandra with the fold of what Kafka still holds, journal by "
        "journal, as a Spark job (or --local); exit 1 when anything differs (docs/operations.md). "
        "Settings: the replicator's KJOURNAL_KAFKA__*, KJOURNAL_CASSANDRA__*, KJOURNAL_SPARK__*.",
    )


class _Command(Protocol):
    """A command's `__main__` module."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run_command(self, args: argparse.Namespace) -> int: ...


def _add(
    sub: argparse._SubParsersAction[Any],
    name: str,
    command: _Command,
    help: str,
    description: str,
) -> None:
    """`kjournal <name>`: `command`'s arguments, run in this process."""
    parser = sub.add_parser(name, help=help, description=description)
    command.add_arguments(parser)
    parser.set_defaults(run_local=_local(command.run_command))


def _local(run: Any) -> Any:
    def command(args: argparse.Namespace) -> int:
        configure_stderr_logging()
        return int(run(args))

    return command
