"""A client following a scenario's journals on the topic feed (docs/feed.md), as a projection
would: from the topic's end, its journals' id prefix, resuming by itself across failures."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from collections.abc import Mapping

from kjournal.api.feed_items import FeedItem
from kjournal.client import AsyncClient
from kjournal.client import RetryPolicy
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key

__all__ = ["FeedFollower"]


class FeedFollower:
    """Open with `async with`: its stream is open at the topic's end when the block starts."""

    def __init__(self, reader_url: str, topic: str, id_prefix: str, retry: RetryPolicy) -> None:
        self._reader_url = reader_url
        self._topic = topic
        self._id_prefix = id_prefix
        self._retry = retry
        self.delivered: list[tuple[str, int]] = []  # (journal id, seqNr), in arrival order
        # per journal, its events, deletes and purges in arrival order (ChurnLoad.timeline's)
        self.timelines: dict[str, list[tuple[object, ...]]] = {}
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
                        self._take(item)
        except Exception as exc:
            self.failure = exc
            self._arrived.set()

    def _take(self, item: FeedItem) -> None:
        if item.type == "heartbeat":
            return
        if item.type == "event" and item.record is not None and item.id:
            seq_nr = int(item.record.seq_nr)
            self.delivered.append((item.id, seq_nr))
            payload = item.record.event.payload
            value = payload.value if isinstance(payload, JsonPayload) else None
            self.timelines.setdefault(item.id, []).append(("event", seq_nr, value))
        elif item.type == "delete" and item.id:
            self.timelines.setdefault(item.id, []).append(("delete", item.to))
        elif item.type == "purge" and item.id:
            self.timelines.setdefault(item.id, []).append(("purge",))
        else:
            self.others.append(f"{item.type} {item.id} at {item.offset}")
        self._arrived.set()

    def timeline(self, journal: str) -> list[tuple[object, ...]]:
        """The journal's entries in arrival order, a delete repeated right after itself once
        (a client's retry of a delete that had landed: the feed delivers each)."""
        entries: list[tuple[object, ...]] = []
        for entry in self.timelines.get(journal, ()):
            if not (entry[0] == "delete" and entries and entries[-1] == entry):
                entries.append(entry)
        return entries

    def has(self, acknowledged: Mapping[Key, Mapping[int, JsonValue]]) -> bool:
        """Whether every acknowledged event of these append-only journals was delivered."""
        wanted = {(key.id, seq_nr) for key, events in acknowledged.items() for seq_nr in events}
        return wanted <= set(self.delivered)

    async def wait_until(self, done: Callable[[], bool], timeout_s: float) -> None:
        """Until `done()`, the follower failed, or `timeout_s` passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not done() and self.failure is None:
            self._arrived.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)
