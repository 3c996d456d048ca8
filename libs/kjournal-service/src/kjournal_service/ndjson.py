"""Streaming NDJSON bodies: one JSON document per line, sent in chunks, never the whole stream.

`prefetch` pulls the first item before the response starts, so whatever fails up front (unknown
topic, Cassandra down, quarantined journal) still becomes a proper problem response. Once lines
have been sent the status cannot change: an error then ends the stream with one last line,
`{"problem": {...}}`, which the client turns back into the error.

Back-pressure comes from the server: each chunk is awaited until the transport takes it, and the
next item is only pulled from the source after that.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any
from typing import Generic
from typing import TypeVar

import orjson
from kjournal.spans import recording
from opentelemetry.trace import get_current_span

__all__ = [
    "FirstChunk",
    "Lines",
    "Prefetched",
    "first_chunk",
    "ndjson_chunks",
    "ndjson_line",
    "ndjson_lines_sharing",
    "prefetch",
]

T = TypeVar("T")

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ORJSON_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def ndjson_line(value: Any) -> bytes:
    """One line: compact JSON, non-ASCII as raw UTF-8, then a newline.

    orjson first (a tenth of the standard library's time, which a stream pays per line); what
    orjson refuses (integers beyond 64 bits, lone surrogates, values that are not JSON) takes
    the standard library's path, which writes big integers and raises for the rest as before."""
    try:
        return orjson.dumps(value, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return (_encoder.encode(value) + "\n").encode()


class Prefetched(Generic[T]):
    """An async iterator whose first item (if any) has already been fetched."""

    def __init__(self, first: list[T], rest: AsyncIterator[T]) -> None:
        self._first = first
        self._rest = rest

    def __aiter__(self) -> AsyncIterator[T]:
        return self._items()

    async def _items(self) -> AsyncIterator[T]:
        async with aclosing(self._rest):  # type: ignore[type-var]
            for item in self._first:
                yield item
            self._first = []
            async for item in self._rest:
                yield item

    async def aclose(self) -> None:
        await _close(self._rest)


async def _close(items: AsyncIterator[Any]) -> None:
    aclose = getattr(items, "aclose", None)
    if aclose is not None:
        await aclose()


async def prefetch(items: AsyncIterator[T]) -> Prefetched[T]:
    """Fetch the first item now; errors propagate (and the source is closed)."""
    try:
        first = [await anext(items)]
    except StopAsyncIteration:
        first = []
    except BaseException:
        await _close(items)
        raise
    return Prefetched(first, items)


def ndjson_lines_sharing(shared: dict[str, Any], own: list[dict[str, Any]]) -> bytes:
    """The lines of `{**item, **shared}` for each item of `own` (no key in both), with `shared`'s
    members encoded once: a feed's events of one append share their record's members."""
    members = ndjson_line(shared)[1:-2]  # between the braces
    lines = bytearray()
    for item in own:
        line = ndjson_line(item)
        lines += line[:-2]
        if members:
            if len(line) > 3:  # not `{}`
                lines += b","
            lines += members
        lines += b"}\n"
    return bytes(lines)


@dataclass(frozen=True, slots=True)
class Lines:
    """Several items' lines, encoded ahead (`data` ends in a newline): what an `encode` given to
    `ndjson_chunks` returns to have them taken whole, counting `count` items."""

    data: bytes
    count: int


@dataclass(slots=True)
class FirstChunk(Generic[T]):
    """The lines of a source's first items, about a chunk; `rest` is None when they are all
    (the answer can go as one body, with its length), else the source to stream on from."""

    lines: bytearray
    count: int
    rest: AsyncIterator[T] | None


async def first_chunk(
    items: AsyncIterator[T], encode: Callable[[T], Any], chunk_bytes: int
) -> FirstChunk[T]:
    """Encode items until about `chunk_bytes` are ready or the source ends. Errors propagate
    (and the source is closed): nothing has been sent, so they are a proper problem answer."""
    lines = bytearray()
    count = 0
    try:
        async for item in items:
            lines += ndjson_line(encode(item))
            count += 1
            if len(lines) >= chunk_bytes:
                return FirstChunk(lines, count, items)
    except BaseException:
        await _close(items)
        raise
    await _close(items)
    return FirstChunk(lines, count, None)


async def ndjson_chunks(
    items: AsyncIterator[T] | Prefetched[T],
    encode: Callable[[T], Any],
    chunk_bytes: int,
    on_error: Callable[[Exception], Any],
    count_attribute: str | None = None,
    first: FirstChunk[T] | None = None,
) -> AsyncIterator[bytes]:
    """Lines of `encode(item)`, batched into chunks of about `chunk_bytes` (after the lines of
    `first`, if given, which counts its items). An `encode` returning `Lines` gives several
    items' lines at once.

    An exception from the source ends the stream with the line `{"problem": on_error(exc)}`.
    `count_attribute` names the attribute of the current span (the request's) that gets the
    number of items sent, once the stream ends.
    """
    buffer = bytearray()
    iterator = aiter(items)
    count = 0 if first is None else first.count
    failed = False
    try:
        try:
            if first is not None:
                yield bytes(first.lines)
            async for item in iterator:
                encoded = encode(item)
                if type(encoded) is Lines:
                    buffer += encoded.data
                    count += encoded.count
                else:
                    buffer += ndjson_line(encoded)
                    count += 1
                if len(buffer) >= chunk_bytes:
                    yield bytes(buffer)
                    buffer.clear()
        except Exception as exc:
            failed = True
            buffer += ndjson_line({"problem": on_error(exc)})
        finally:
            # An error closing the source (a driver's cleanup) breaks the stream as well: it too
            # ends with a problem line and a complete response, not a cut connection.
            try:
                await _close(iterator)
            except Exception as exc:
                if not failed:
                    buffer += ndjson_line({"problem": on_error(exc)})
        if buffer:
            yield bytes(buffer)
    finally:
        if count_attribute is not None and recording():
            get_current_span().set_attribute(count_attribute, count)
