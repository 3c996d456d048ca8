"""Small asyncio helpers shared by the core's and the services' clients and background tasks."""

from __future__ import annotations

import asyncio
from typing import Self, TypeVar

__all__ = ["AsyncResource", "cancel_and_wait"]


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
