"""The fold's end offsets (read/follower.py `EndOffsets`): shared by the calls of one moment, and
never older than the call that asked."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from kjournal.read.follower import EndOffsets


class _Log:
    """A partition end that grows, and the ListOffsets requests made of it."""

    def __init__(self) -> None:
        self.end = 10
        self.requests: list[tuple[str, tuple[int, ...]]] = []
        self.answering = asyncio.Event()
        self.answering.set()
        self._sent = asyncio.Condition()

    async def fetch(self, topic: str, partitions: Sequence[int]) -> dict[int, int]:
        async with self._sent:
            self.requests.append((topic, tuple(partitions)))
            self._sent.notify_all()
        asked_at = self.end
        await self.answering.wait()
        return dict.fromkeys(partitions, asked_at)

    async def sent(self, count: int) -> None:
        async with self._sent:
            await self._sent.wait_for(lambda: len(self.requests) >= count)


@pytest.mark.anyio
async def test_the_calls_of_one_moment_share_one_request() -> None:
    log = _Log()
    ends = EndOffsets(log.fetch)
    answers = await asyncio.gather(ends.end("t", 0), ends.end("t", 1), ends.end("t", 0))
    assert list(answers) == [10, 10, 10]
    assert log.requests == [("t", (0, 1))]


@pytest.mark.anyio
async def test_a_call_made_while_a_request_is_out_waits_for_a_request_of_its_own() -> None:
    log = _Log()
    ends = EndOffsets(log.fetch)
    log.answering.clear()
    first = asyncio.ensure_future(ends.end("t", 0))
    await log.sent(1)  # the first request is out
    log.end = 12  # an append acknowledged after the first request was sent
    second = asyncio.ensure_future(ends.end("t", 0))
    await log.sent(2)
    log.answering.set()
    assert await first == 10
    assert await second == 12  # not the answer of the request sent before it was asked
    assert len(log.requests) == 2


@pytest.mark.anyio
async def test_an_error_reaches_every_caller_of_the_request() -> None:
    async def failing(topic: str, partitions: Sequence[int]) -> dict[int, int]:
        raise ConnectionError("no broker")

    ends = EndOffsets(failing)
    results = await asyncio.gather(ends.end("t", 0), ends.end("t", 1), return_exceptions=True)
    assert all(isinstance(result, ConnectionError) for result in results)
