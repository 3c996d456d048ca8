"""The writer asks the reader for outcomes in batches (kjournal_writer/outcomes.py): the questions
of one topic and one caller's token that wait at the same moment go in one request, a token never
shares a request with another, and every question gets its own answer, or its own error.

A real aiohttp client against a local server playing the reader: it answers each question by its
offset (7: taken, 8: a quarantined journal, 9: no line at all).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field

import pytest
from kjournal.api.problems import problem_for_error
from kjournal.errors import JournalQuarantined
from kjournal.errors import OutcomeUnknown
from kjournal.model import Key
from kjournal.model import Outcome
from kjournal_writer.outcomes import CALLER_AUTHORIZATION
from kjournal_writer.outcomes import ReaderOutcomes
from kjournal_writer.settings import ReaderLinkSettings

TAKEN = {"outcome": "taken", "seqNr": 1, "partition": 0, "timestamp": "2026-12-06T09:00:00.000Z"}
QUARANTINED = problem_for_error(JournalQuarantined("journal", "q", 0, 8, "bad payload"))


@dataclass
class _Reader:
    """The requests it was sent: (Authorization header, the questions' offsets)."""

    requests: list[tuple[str | None, list[int]]] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                fields = (
                    line.decode().split(": ", 1)
                    for line in head.split(b"\r\n")[1:]
                    if b": " in line
                )
                headers = {name.lower(): value for name, value in fields}
                body = json.loads(await reader.readexactly(int(headers["content-length"])))
                offsets = [question["offset"] for question in body["appends"]]
                self.requests.append((headers.get("authorization"), offsets))
                lines = "".join(self._line(i, offset) for i, offset in enumerate(offsets))
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\n"
                    + f"content-length: {len(lines.encode())}\r\n\r\n".encode()
                    + lines.encode()
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @staticmethod
    def _line(index: int, offset: int) -> str:
        if offset == 9:
            return ""
        if offset == 8:
            problem = QUARANTINED.model_dump(mode="json", by_alias=True, exclude_none=True)
            return json.dumps({"i": index, "problem": problem}) + "\n"
        return json.dumps({"i": index, "outcome": {**TAKEN, "offset": offset}}) + "\n"


async def _ask(link: ReaderOutcomes, key: Key, offset: int, token: str | None) -> object:
    CALLER_AUTHORIZATION.set(token)  # each task has its own context
    try:
        return await link.outcome(key, offset)
    except Exception as exc:
        return exc


@asynccontextmanager
async def _linked(played: _Reader) -> AsyncIterator[ReaderOutcomes]:
    """A writer's link to `played`, served on a free loopback port."""
    server = await asyncio.start_server(played.handle, "127.0.0.1", 0)
    async with server:
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        async with ReaderOutcomes(ReaderLinkSettings(url=url)) as link:
            yield link


@pytest.mark.anyio
async def test_questions_of_one_moment_go_together_per_topic_and_token() -> None:
    played = _Reader()
    async with _linked(played) as link:
        asked = [
            _ask(link, Key("journal", f"j{n}"), 7, "Bearer a" if n % 2 else "Bearer b")
            for n in range(40)
        ]
        answers = await asyncio.gather(*asked)
    assert all(getattr(answer, "outcome", None) is Outcome.TAKEN for answer in answers)
    assert sorted(token or "" for token, _ in played.requests) == ["Bearer a", "Bearer b"]
    assert sorted(len(offsets) for _, offsets in played.requests) == [20, 20]


@pytest.mark.anyio
async def test_each_question_gets_its_own_answer_or_error() -> None:
    played = _Reader()
    async with _linked(played) as link:
        taken, quarantined, unanswered = await asyncio.gather(
            _ask(link, Key("journal", "t"), 7, None),
            _ask(link, Key("journal", "q"), 8, None),
            _ask(link, Key("journal", "u"), 9, None),
        )
    assert played.requests == [(None, [7, 8, 9])]
    assert getattr(taken, "outcome", None) is Outcome.TAKEN
    assert isinstance(quarantined, JournalQuarantined)
    assert isinstance(unanswered, OutcomeUnknown)
    assert "did not answer for it" in str(unanswered)
