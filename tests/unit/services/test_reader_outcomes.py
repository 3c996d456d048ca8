"""The writer's link to the reader drops a connection that brought an answer no reader gives.

On a cluster, a connection to a Service's address made before kube-proxy routes it can reach
something else: on the dev box an egress proxy takes it and answers every request with an empty
404, keeping the connection alive. Reused, that connection would make every later append of the
writer `outcome-unknown`, although the reader answers by then. A real aiohttp client against a
local server that is the stranger on its first connection and the reader on every later one.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from kjournal.errors import OutcomeUnknown
from kjournal.model import AppendOutcome
from kjournal.model import Key
from kjournal_writer.outcomes import ReaderOutcomes
from kjournal_writer.settings import ReaderLinkSettings

KEY = Key("journal", "a")
OUTCOME = {
    "outcome": "taken",
    "seqNr": 1,
    "partition": 0,
    "offset": 7,
    "timestamp": "2026-11-29T09:00:00.000Z",
    "expected": None,
}


def _response(status: str, body: bytes, server: str) -> bytes:
    head = f"HTTP/1.1 {status}\r\nserver: {server}\r\ncontent-length: {len(body)}\r\n"
    if body:
        head += "content-type: application/x-ndjson\r\n"
    return head.encode() + b"\r\n" + body


async def _request(reader: asyncio.StreamReader) -> bytes:
    """One request's head and body (the writer asks with a JSON body)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return await reader.readexactly(length)


async def _stranger_then_reader(connections: list[int]) -> asyncio.Server:
    """The stranger (an empty 404, kept alive) on the first connection, the reader after it."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(len(connections))
        stranger = len(connections) == 1
        try:
            while body := await _request(reader):
                asked = json.loads(body)["appends"]
                if stranger:
                    writer.write(_response("404 Not Found", b"", "keryx"))
                else:
                    lines = "".join(
                        json.dumps({"i": i, "outcome": OUTCOME}) + "\n" for i in range(len(asked))
                    )
                    writer.write(_response("200 OK", lines.encode(), "uvicorn"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def test_a_connection_that_brought_a_strangers_answer_is_not_used_again():
    connections: list[int] = []

    async def ask_twice() -> tuple[OutcomeUnknown, AppendOutcome]:
        async with await _stranger_then_reader(connections) as server:
            port = server.sockets[0].getsockname()[1]
            async with ReaderOutcomes(ReaderLinkSettings(url=f"http://127.0.0.1:{port}")) as link:
                with pytest.raises(OutcomeUnknown) as stranger:
                    await link.outcome(KEY, 7)
                return stranger.value, await link.outcome(KEY, 7)

    stranger, answer = asyncio.run(ask_twice())

    assert (
        "answered 404 with content type application/octet-stream from server 'keryx', not"
        in str(stranger)
    )
    assert (answer.seq_nr, answer.position.offset) == (1, 7)
    assert len(connections) == 2
