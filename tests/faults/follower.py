"""A client following a scenario's journals on the topic feed (docs/feed.md), as a projection
would: from the topic's end, its journals' id prefix, resuming by itself across failures."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

from kjournal.client import AsyncClient, RetryPolicy
from kjournal.model import JsonValue, Key

__all__ = ["FeedFollower"]


class FeedFollower:
    """Open with `async with`: its stream is open at the topic's end when the block starts."""

    def __init__(self, reader_url: str, topic: str, id_prefix: str, retry: RetryPolicy) -> None:
        self._reader_url = reader_url
        self._topic = topic
        self._id_prefix = id_prefix
        self._retry = retry
        self.delivered: list[tuple[str, int]] = []  # (journal id, seqNr), in arrival order
        self.others: list[str] = []  # any other entry but heartbeats, described
        self.failure: BaseException | None = None
        self._ready = asyncio.Event()
        self._arrived = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FeedFollower:
        self._task = asyncio.create_task(self._follow())
        ready = asyncio.create_task(self._ready.wait())
        await asyncio.wait({ready, self._task}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if not self._ready.is_set():
            await self.__aexit__(None, None, None)
            raise AssertionError(f"the feed did not open in 60 s: {self.failure!r}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _follow(self) -> None:
        try:
            async with AsyncClient(reader_url=self._reader_url, retry=self._retry) as client:
                items = client.follow(
                    self._topic, from_end=True, id_prefix=self._id_prefix, heartbeat_s=1.0
                )
                async with contextlib.aclosing(items):
                    async for item in items:
                        self._ready.set()  # the first heartbeat names the end it starts from
                        if item.type == "event" and item.record is not None and item.id:
                            self.delivered.append((item.id, int(item.record.seq_nr)))
                            self._arrived.set()
                        elif item.type != "heartbeat":
                            self.others.append(f"{item.type} {item.id} at {item.offset}")
        except Exception as exc:
            self.failure = exc
            self._arrived.set()

    async def wait_for(
        self, acknowledged: Mapping[Key, Mapping[int, JsonValue]], timeout_s: float
    ) -> None:
        """Until every acknowledged event was delivered, the follower failed, or `timeout_s`."""
        wanted = {(key.id, seq_nr) for key, events in acknowledged.items() for seq_nr in events}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not wanted <= set(self.delivered) and self.failure is None:
            self._arrived.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)
