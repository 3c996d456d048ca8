"""Small asyncio helpers shared by the core's and the services' clients and background tasks."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Self

__all__ = ["AsyncResource", "cancel_and_wait"]


async def cancel_and_wait(task: asyncio.Task[None] | None) -> None:
    """Cancel a background task and wait until it has ended (no-op for None)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


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
