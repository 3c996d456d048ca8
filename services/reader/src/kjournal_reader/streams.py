"""Streamed answers: NDJSON lines, and a problem line if the stream breaks after it began; or
server-sent events (`text/event-stream`), each sent as soon as it is ready."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import Any
from typing import TypeVar

from fastapi import Request
from fastapi import Response
from fastapi.responses import StreamingResponse
from kjournal.api.schemas import NDJSON_CONTENT_TYPE
from kjournal.spans import recording
from kjournal_service.ndjson import FirstChunk
from kjournal_service.ndjson import Prefetched
from kjournal_service.ndjson import ndjson_chunks
from kjournal_service.ndjson import ndjson_line
from kjournal_service.problems import problem_responses
from kjournal_service.problems import stream_problem
from kjournal_service.settings import HttpSettings
from opentelemetry.trace import get_current_span

T = TypeVar("T")

EVENT_STREAM_CONTENT_TYPE = "text/event-stream"


def ndjson_responses(model: str, description: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` of a streamed route: NDJSON lines of `model`, or a problem."""
    lines = {"schema": {"$ref": f"#/components/schemas/{model}"}}
    return {
        200: {"description": description, "content": {NDJSON_CONTENT_TYPE: lines}},
        **problem_responses(400, 404, 500, 503, 504),
    }


def ndjson_response(
    request: Request,
    http: HttpSettings,
    items: AsyncIterator[T] | Prefetched[T],
    encode: Callable[[T], Any],
    count_attribute: str | None = None,
) -> StreamingResponse:
    """`items` as NDJSON (prefetch them first, so that an early failure is a problem answer);
    `count_attribute`: the request span's attribute that gets the number of lines sent."""
    path = request.url.path

    def on_error(exc: Exception) -> dict[str, Any]:
        return stream_problem(exc, "GET", path)

    return StreamingResponse(
        ndjson_chunks(items, encode, http.stream_chunk_bytes, on_error, count_attribute),
        media_type=NDJSON_CONTENT_TYPE,
    )


def whole_or_streamed(
    request: Request,
    http: HttpSettings,
    first: FirstChunk[T],
    encode: Callable[[T], Any],
    count_attribute: str | None = None,
) -> Response:
    """An answer whose lines all fit in `first` as one body (with its length: no chunked
    stream to set up and end), else `first`'s lines streamed on as `ndjson_response` does."""
    if first.rest is None:
        if count_attribute is not None and recording():
            get_current_span().set_attribute(count_attribute, first.count)
        return Response(bytes(first.lines), media_type=NDJSON_CONTENT_TYPE)
    path = request.url.path

    def on_error(exc: Exception) -> dict[str, Any]:
        return stream_problem(exc, "GET", path)

    return StreamingResponse(
        ndjson_chunks(
            first.rest, encode, http.stream_chunk_bytes, on_error, count_attribute, first
        ),
        media_type=NDJSON_CONTENT_TYPE,
    )


def event_stream_response(
    request: Request,
    items: AsyncIterator[T] | Prefetched[T],
    encode: Callable[[T], dict[str, Any]],
) -> StreamingResponse:
    """`items` as server-sent events: `event:` the encoded item's `type`, `id:` its `cursor`,
    `data:` the item as one JSON line. A stream broken after it began ends with an event
    `problem` whose data is the problem."""
    path = request.url.path

    async def frames() -> AsyncIterator[bytes]:
        iterator = aiter(items)
        try:
            async for item in iterator:
                value = encode(item)
                head = f"event: {value['type']}\nid: {value['cursor']}\ndata: ".encode()
                yield head + ndjson_line(value) + b"\n"
        except Exception as exc:
            problem = stream_problem(exc, "GET", path)
            yield b"event: problem\ndata: " + ndjson_line(problem) + b"\n"
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    return StreamingResponse(
        frames(),
        media_type=EVENT_STREAM_CONTENT_TYPE,
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )
