"""The writer's link to the reader asks again when the reader was not reached, and drops a
connection that brought an answer no reader gives.

On a cluster, a connection to a Service's address made before kube-proxy routes it can reach
something else: on the dev box an egress proxy takes it and answers every request with an empty
404, keeping the connection alive. Reused, that connection would make every later append of the
writer `outcome-unknown`, although the reader answers by then. A real aiohttp client against a
local server that is the stranger on its first connection and the reader on every later one.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Literal

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


async def _stranger_then_reader(
    connections: list[int], first: Literal["stranger", "hangs up"] = "stranger"
) -> asyncio.Server:
    """On the first connection the stranger (an empty 404, kept alive) or a peer that hangs up
    once it has read the request; the reader on every later one."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(len(connections))
        stranger = first == "stranger" and len(connections) == 1
        if first == "hangs up" and len(connections) == 1:
            await _request(reader)
            writer.close()
            return
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


def test_a_question_a_stranger_answered_is_asked_again_over_a_new_connection():
    connections: list[int] = []

    async def ask_twice() -> tuple[AppendOutcome, AppendOutcome]:
        async with await _stranger_then_reader(connections) as server:
            port = server.sockets[0].getsockname()[1]
            async with ReaderOutcomes(ReaderLinkSettings(url=f"http://127.0.0.1:{port}")) as link:
                return await link.outcome(KEY, 7), await link.outcome(KEY, 7)

    first, second = asyncio.run(ask_twice())

    assert (first.seq_nr, first.position.offset) == (1, 7)
    assert (second.seq_nr, second.position.offset) == (1, 7)
    assert len(connections) == 2  # the stranger's connection is not used again


def test_a_question_is_asked_again_when_the_reader_hung_up_without_an_answer():
    """A reader that closes the connection before it answers (it is restarting, or a proxy in
    between drops the connection): the question goes again, over a new connection."""
    connections: list[int] = []

    async def ask() -> AppendOutcome:
        async with await _stranger_then_reader(connections, first="hangs up") as server:
            port = server.sockets[0].getsockname()[1]
            async with ReaderOutcomes(ReaderLinkSettings(url=f"http://127.0.0.1:{port}")) as link:
                return await link.outcome(KEY, 7)

    answer = asyncio.run(ask())

    assert (answer.seq_nr, answer.position.offset) == (1, 7)
    assert len(connections) == 2


def test_a_reader_never_reached_is_an_outcome_unknown_that_says_why():
    # A port bound but not listening refuses every connection, and no other process can take
    # it while the test holds it.
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        port = refusing.getsockname()[1]

        async def ask() -> None:
            settings = ReaderLinkSettings(url=f"http://127.0.0.1:{port}", timeout_s=1.0)
            async with ReaderOutcomes(settings) as link:
                await link.outcome(KEY, 7)

        with pytest.raises(OutcomeUnknown) as unknown:
            asyncio.run(ask())

    assert "did not tell its outcome within 1.0 s (asked " in str(unknown.value)
    assert "ClientConnectorError" in str(unknown.value)
    assert "resending the same append is safe" in str(unknown.value)
