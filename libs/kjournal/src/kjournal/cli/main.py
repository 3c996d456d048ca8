"""`kjournal`: append to, read and manage journals through the writer and reader services."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from contextlib import nullcontext
from importlib.metadata import entry_points

from kjournal.cli import commands
from kjournal.cli.tracing import traced
from kjournal.client import Client
from kjournal.errors import KJournalError

DEFAULT_WRITER_URL = "http://127.0.0.1:8081"
DEFAULT_READER_URL = "http://127.0.0.1:8082"

Command = Callable[[argparse.Namespace, Client], int]

OPS_ENTRY_POINTS = "kjournal.ops"
"""Where operators' commands that reach Kafka and Cassandra directly come from (`check`,
`expire`): the replicator package (kjournal-replicator, in the replicator image) registers them.
Each entry point is called with the subparsers and adds its commands, whose `run_local` default
takes the parsed arguments alone (no HTTP client)."""


def _journal(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str, run: Command
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help, description=help)
    parser.add_argument("topic", help="journal topic, e.g. journal")
    parser.add_argument("id", help="journal id (any text; it is percent-encoded for you)")
    parser.set_defaults(run=run)
    return parser


def _read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="from_", type=int, default=1, metavar="N")
    parser.add_argument(
        "--format",
        choices=["lines", "ndjson"],
        default="lines",
        help="lines: seqNr, time, partition:offset, type, tags, payload; ndjson: the API's lines",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kjournal",
        description="Append to and read kjournal journals over HTTP.",
        epilog="Service URLs default to $KJOURNAL_WRITER_URL / $KJOURNAL_READER_URL, else "
        f"{DEFAULT_WRITER_URL} / {DEFAULT_READER_URL}.",
    )
    parser.add_argument(
        "--writer", default=os.environ.get("KJOURNAL_WRITER_URL", DEFAULT_WRITER_URL)
    )
    parser.add_argument(
        "--reader", default=os.environ.get("KJOURNAL_READER_URL", DEFAULT_READER_URL)
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument(
        "--trace",
        action="store_true",
        help="run the command as one OpenTelemetry trace and print its id on stderr",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("KJOURNAL_TOKEN"),
        help="bearer token for services with authentication on (default: $KJOURNAL_TOKEN)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    append = _journal(
        sub, "append", "append events atomically (one record: all or none)", commands.append
    )
    append.add_argument(
        "payloads",
        nargs="*",
        metavar="PAYLOAD",
        help="one event each: JSON (default), text or base64; @FILE reads a file, @- stdin",
    )
    append.add_argument("--type", choices=["json", "text", "binary"], default="json")
    append.add_argument(
        "--seq-nr",
        type=int,
        help="seqNr of the first event (default: the pointer + 1, appended only if the journal "
        "is still at the pointer)",
    )
    append.add_argument(
        "--expect",
        type=int,
        metavar="N",
        help="append only if the journal is at seqNr N (0: only if it does not exist); the first "
        "event is N + 1 (otherwise exit 1 with the journal's seqNr)",
    )
    append.add_argument("--tag", action="append", help="a tag for every event (repeatable)")
    append.add_argument("--expire-after", help='e.g. "7 days" (the journal may then be purged)')
    append.add_argument("--metadata", help="JSON kept with the record (header metadata)")
    append.add_argument("--header", action="append", help="NAME=VALUE Kafka tailer (repeatable)")

    read = _journal(sub, "read", "print the journal's events", commands.read)
    _read_options(read)
    read.add_argument("--to", type=int, metavar="N")
    read.add_argument("--limit", type=int, metavar="N")
    read.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    tail = _journal(
        sub, "tail", "print the events, then follow new ones (Ctrl-C stops)", commands.tail
    )
    _read_options(tail)
    tail.add_argument("--interval", type=float, default=1.0, help="seconds between polls")

    _journal(sub, "pointer", "print the last seqNr (exit 1 if no journal)", commands.pointer)
    status = _journal(
        sub, "status", "show the head and what is not yet replicated", commands.status
    )
    status.add_argument("--format", choices=["text", "json"], default="text")
    delete = _journal(sub, "delete", "delete events with seqNr ≤ --to", commands.delete)
    delete.add_argument("--to", type=int, required=True, metavar="N")
    purge = _journal(sub, "purge", "erase the journal (asks unless --yes)", commands.purge)
    purge.add_argument("--yes", action="store_true", help="do not ask")
    mark = _journal(sub, "mark", "write a mark (a barrier record)", commands.mark)
    mark.add_argument("--id", dest="mark_id", help="the mark's id (default: a random UUID)")

    follow = sub.add_parser(
        "follow",
        help="print every journal's events of a topic, then new ones (Ctrl-C stops and prints "
        "the cursor to resume from)",
    )
    follow.add_argument("topic")
    follow.add_argument("--after", metavar="CURSOR", help="resume right after this cursor")
    follow.add_argument(
        "--from-end", action="store_true", help="without --after: only what comes from now on"
    )
    follow.add_argument("--tag", action="append", help="only events with this tag (repeatable)")
    follow.add_argument("--id-prefix", help="only journals whose id starts with this")
    follow.add_argument(
        "--format",
        choices=["lines", "ndjson"],
        default="lines",
        help="lines: journal id, then as `read` prints events; ndjson: the feed's lines",
    )
    follow.set_defaults(run=commands.follow)

    journals = sub.add_parser("journals", help="list the ids of a topic's replicated journals")
    journals.add_argument("topic")
    journals.set_defaults(run=commands.journals)
    replication = sub.add_parser("replication", help="show a topic's replication lag")
    replication.add_argument("topic")
    replication.set_defaults(run=commands.replication)
    for entry in entry_points(group=OPS_ENTRY_POINTS):
        entry.load()(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run_local: Callable[[argparse.Namespace], int] | None = getattr(args, "run_local", None)
    if run_local is not None:
        return run_local(args)
    client = Client(args.writer, args.reader, timeout=args.timeout, token=args.token)
    try:
        with traced(args.command) if args.trace else nullcontext():
            code: int = args.run(args, client)
    except KeyboardInterrupt:
        # The client is left open: an interrupt inside its connection pool can leave the pool's
        # lock held, and closing it would then wait forever. The process ends; its sockets close.
        return 130
    except KJournalError as exc:
        sys.stderr.write(f"kjournal: error: {type(exc).__name__}: {exc}\n")
        code = 1
    except BrokenPipeError:  # e.g. `kjournal read ... | head`
        sys.stderr.close()
        code = 0
    client.close()
    return code
