"""Small asyncio helpers shared by the core's and the services' clients and background tasks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Self
from typing import TypeVar

__all__ = ["AsyncResource", "cancel_and_wait", "uninterrupted"]


_RECANCEL_S = 0.1

_T = TypeVar("_T")


async def cancel_and_wait(task: asyncio.Task[None] | None) -> None:
    """Cancel a background task and wait until it has ended (no-op for None); an error it ended
    with is raised.

    A task that swallows the cancellation is cancelled again until it ends: libraries do swallow
    it (aiokafka's `AIOKafkaConsumer.stop` awaits its fetch task under
    `suppress(CancelledError)`, so a task cancelled while stopping a consumer carries on)."""
    if task is None:
        return
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=_RECANCEL_S)
    if not task.cancelled():
        task.result()


async def uninterrupted(operation: Awaitable[None]) -> None:
    """Await `operation` to its end even if the caller is cancelled meanwhile, then raise the
    cancellation (chained to the error `operation` ended with, if any).

    For a library's start or stop that a cancel landing halfway leaves holding a connection that
    nothing closes (aiokafka 0.14):
    - `AIOKafkaConsumer.stop` marks the consumer closed, stops its fetcher, then closes its
      client; a cancel before the last step leaves the client's connections open for good (a
      stop called again returns at once);
    - `start` asks the bootstrap broker for metadata on a connection of its own, which it closes
      after an error or an answer, but not after a cancel.
    `cancel_and_wait` cancels again every 0.1 s, so a stop slower than that under load is cut
    short unless it is awaited through this. A start waits at most the client's request timeout
    (`KafkaSettings.request_timeout_ms`)."""
    task = asyncio.ensure_future(operation)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})  # unlike awaiting the task, never cancels it
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError from (None if task.cancelled() else task.exception())
    task.result()


class AsyncResource:
    """A client or background task that `async with` opens and closes: entering runs `open`
    (then `close` if opening failed, so nothing half-open is left behind), leaving runs `close`.
    """

    async def open(self) -> None:
        """Connect or start what the resource holds; nothing by default."""

    async def close(self) -> None:
        """Release what `open` took, also after a failed or partial `open`; nothing by default."""

    async def __aenter__(self) -> Self:
        try:
            await self.open()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _opened(self, held: _T | None) -> _T:
        """What `open` set up (`held`), or a RuntimeError saying the resource is not open."""
        if held is None:
            name = type(self).__name__
            raise RuntimeError(f"{name} is not open: use `async with {name}(...)`")
        return held
