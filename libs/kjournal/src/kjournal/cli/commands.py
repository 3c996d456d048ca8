"""The CLI's commands: each takes the parsed arguments and a client, writes to stdout, returns
an exit status (0 done, 1 not found)."""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import sys
from contextlib import closing
from pathlib import Path

from kjournal.cli.interrupt import stop_on_interrupt
from kjournal.cli.render import append_line
from kjournal.cli.render import event_line
from kjournal.cli.render import feed_line
from kjournal.cli.render import key_values
from kjournal.cli.render import progress
from kjournal.cli.render import status_lines
from kjournal.client import Client
from kjournal.errors import InvalidInput
from kjournal.errors import InvalidPayload
from kjournal.model import SEQ_NR_MAX
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import ExpireAfter
from kjournal.model import HeaderMetadata
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import Payload
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal.model.durations import parse_duration

# Between two polls of `tail`, and how many events the progress bar is advanced by at once.
_PROGRESS_STEP = 200
# How soon `follow` notices Ctrl-C when nothing comes (the reader's heartbeat interval).
_FOLLOW_HEARTBEAT_S = 1.0


def _key(args: argparse.Namespace) -> Key:
    return Key(args.topic, args.id)


def _raw(value: str) -> bytes:
    """`@path` is the file's content, `@-` standard input, anything else the text itself."""
    if value == "@-":
        return sys.stdin.buffer.read()
    if value.startswith("@"):
        return Path(value[1:]).read_bytes()
    return value.encode()


def _payload(value: str, kind: str) -> Payload:
    raw = _raw(value)
    if kind == "binary":
        if value.startswith("@"):
            return BinaryPayload(raw)
        try:
            return BinaryPayload(base64.b64decode(raw, validate=True))
        except (binascii.Error, ValueError):
            raise InvalidPayload(f"not base64: {value!r} (use @file for raw bytes)") from None
    text = raw.decode()
    if kind == "text":
        return TextPayload(text)
    try:
        return JsonPayload(json.loads(text))
    except ValueError:
        raise InvalidPayload(
            f"not JSON: {value!r} (quote strings as JSON, or use --type text)"
        ) from None


def append(args: argparse.Namespace, client: Client) -> int:
    key = _key(args)
    expect: int | None = args.expect
    first = args.seq_nr
    if expect is not None and first is None:
        first = expect + 1
    if first is None:
        # After what the journal holds now, and only if nobody appended in between.
        pointer = client.pointer(key)
        expect = pointer or 0
        first = expect + 1
    payloads: list[Payload | None] = [_payload(value, args.type) for value in args.payloads]
    if not payloads:
        payloads = [None]
    tags = frozenset(args.tag or ())
    events = [Event(SeqNr(first + index), tags, payload) for index, payload in enumerate(payloads)]
    expire_after: ExpireAfter | None = (
        parse_duration(args.expire_after) if args.expire_after else None
    )
    try:
        data = json.loads(args.metadata) if args.metadata else None
    except ValueError:
        raise InvalidInput(f"--metadata is not JSON: {args.metadata!r}") from None
    metadata = RecordMetadata(HeaderMetadata(data), PayloadMetadata(expire_after))
    headers = dict(_header(item) for item in args.header or ())
    result = client.append(key, events, metadata, headers, expected_seq_nr=expect)
    print(append_line(result))
    return 0


def _header(item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name:
        raise InvalidInput(f"--header wants NAME=VALUE, got {item!r}")
    return name, value


def read(args: argparse.Namespace, client: Client) -> int:
    key = _key(args)
    to = args.to if args.to is not None else SEQ_NR_MAX
    total = None
    # The bar goes to a terminal on stderr while the events go elsewhere (`> events.ndjson`):
    # on the terminal itself, the lines are the progress.
    show_progress = not args.no_progress and not sys.stdout.isatty()
    if show_progress:
        pointer = client.pointer(key)
        if pointer is not None:
            total = max(0, min(pointer, to) - args.from_ + 1)
            if args.limit is not None:
                total = min(total, args.limit)
    count = 0
    out = sys.stdout
    with (
        progress(total, f"reading {key}", show_progress) as advance,
        closing(client.read(key, args.from_, to, args.limit)) as records,
    ):
        for record in records:
            out.write(event_line(record, args.format) + "\n")
            count += 1
            if count % _PROGRESS_STEP == 0:
                advance(_PROGRESS_STEP)
        advance(count % _PROGRESS_STEP)
    out.flush()
    if args.format == "lines":
        sys.stderr.write(f"{count} events\n")
    return 0


def tail(args: argparse.Namespace, client: Client) -> int:
    """Follow the journal until Ctrl-C, which stops it between requests (exit 0)."""
    key = _key(args)
    next_from = args.from_
    out = sys.stdout
    with stop_on_interrupt() as stopped:
        while not stopped.is_set():
            got = False
            with closing(client.read(key, next_from)) as records:
                for record in records:
                    out.write(event_line(record, args.format) + "\n")
                    next_from = record.seq_nr + 1
                    got = True
                    if stopped.is_set():
                        break
            out.flush()
            if not got and next_from > 1 and not stopped.is_set():
                pointer = client.pointer(key)
                if pointer is None or pointer < next_from - 1:
                    sys.stderr.write(f"{key} was purged or deleted; following it from seqNr 1\n")
                    next_from = 1
            stopped.wait(args.interval)
    return 0


def follow(args: argparse.Namespace, client: Client) -> int:
    """Follow the topic's feed until Ctrl-C, then print the cursor to resume from (exit 0)."""
    out = sys.stdout
    cursor = args.after
    items = client.follow(
        args.topic,
        args.after,
        from_end=args.from_end,
        tags=args.tag or (),
        id_prefix=args.id_prefix,
        heartbeat_s=_FOLLOW_HEARTBEAT_S,
    )
    with stop_on_interrupt() as stopped, closing(items):
        for item in items:
            if item.type != "heartbeat":
                out.write(feed_line(item, args.format) + "\n")
                out.flush()
            cursor = item.cursor
            if stopped.is_set():
                break
    if cursor is not None:
        sys.stderr.write(f"resume with: --after {cursor}\n")
    return 0


def pointer(args: argparse.Namespace, client: Client) -> int:
    seq_nr = client.pointer(_key(args))
    if seq_nr is None:
        return _no_journal(args)
    print(seq_nr)
    return 0


def status(args: argparse.Namespace, client: Client) -> int:
    current = client.status(_key(args))
    if current is None:
        return _no_journal(args)
    if args.format == "json":
        print(json.dumps(dict(status_lines(current))))
    else:
        key_values(status_lines(current), sys.stdout)
    return 0


def _no_journal(args: argparse.Namespace) -> int:
    sys.stderr.write(f"no journal {_key(args)}\n")
    return 1


def delete(args: argparse.Namespace, client: Client) -> int:
    position = client.delete(_key(args), args.to)
    print(f"delete to {args.to} written at partition {position.partition} offset {position.offset}")
    return 0


def purge(args: argparse.Namespace, client: Client) -> int:
    key = _key(args)
    if not args.yes:
        if not sys.stdin.isatty():
            raise InvalidInput("purge erases the journal: pass --yes to confirm")
        answer = input(f"purge {key}? every event will be gone [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            sys.stderr.write("not purged\n")
            return 1
    position = client.purge(key)
    print(f"purge written at partition {position.partition} offset {position.offset}")
    return 0


def mark(args: argparse.Namespace, client: Client) -> int:
    result = client.mark(_key(args), args.mark_id)
    position = result.partition_offset
    print(f"mark {result.id} at partition {position.partition} offset {position.offset}")
    return 0


def journals(args: argparse.Namespace, client: Client) -> int:
    with closing(client.ids(args.topic)) as ids:
        for id_ in ids:
            print(id_)
    return 0


def replication(args: argparse.Namespace, client: Client) -> int:
    report = client.replication(args.topic)
    header = ("partition", "beginning", "end offset", "pointer2", "lag")
    print("  ".join(f"{title:>12}" for title in header))
    for row in report.partitions:
        pointer2 = "-" if row.pointer2 is None else str(row.pointer2)
        cells = (row.partition, row.beginning_offset, row.end_offset, pointer2, row.lag)
        print("  ".join(f"{cell:>12}" for cell in cells))
    print(f"{'total':>12}  {'':>12}  {'':>12}  {'':>12}  {report.lag:>12}")
    return 0
