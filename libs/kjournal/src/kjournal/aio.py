"""Small asyncio helpers shared by the core's and the services' background tasks."""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(task: asyncio.Task[None] | None) -> None:
    """Cancel a background task and wait until it has ended (no-op for None)."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
