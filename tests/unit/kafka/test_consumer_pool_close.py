"""Closing what runs in the background while it stops a Kafka consumer.

aiokafka's `AIOKafkaConsumer.stop` swallows a cancellation that lands while it waits for its
fetch task; these fakes do the same, so a cancel sent at that moment is lost, as with a real
consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from kjournal.aio import cancel_and_wait
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.settings import ConsumerPoolSettings, KafkaSettings


class _SlowStoppingConsumer:
    """A consumer whose stop waits for `release` and swallows a cancellation, as aiokafka's."""

    def __init__(self) -> None:
        self.stopping = asyncio.Event()
        self.release = asyncio.Event()
        self.stopped = False

    def assignment(self) -> set[Any]:
        return set()

    async def stop(self) -> None:
        self.stopping.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self.release.wait()
        await self.release.wait()
        self.stopped = True


def test_a_task_that_swallows_a_cancellation_is_cancelled_until_it_ends() -> None:
    async def run() -> None:
        swallowed = asyncio.Event()

        async def stubborn() -> None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
            swallowed.set()
            await asyncio.Event().wait()  # carries on, as if the cancel never came

        task = asyncio.create_task(stubborn())
        await asyncio.sleep(0)
        await cancel_and_wait(task)
        assert swallowed.is_set()
        assert task.cancelled()

    asyncio.run(run())


def test_an_error_the_task_ended_with_is_raised() -> None:
    async def run() -> None:
        async def failing() -> None:
            raise RuntimeError("boom")

        task = asyncio.create_task(failing())
        await asyncio.wait({task})
        with pytest.raises(RuntimeError, match="boom"):
            await cancel_and_wait(task)

    asyncio.run(run())


def test_closing_the_pool_waits_for_the_reaper_to_finish_stopping_a_consumer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def run() -> None:
        consumer = _SlowStoppingConsumer()

        async def create(self: ConsumerPool) -> _SlowStoppingConsumer:
            return consumer

        monkeypatch.setattr(ConsumerPool, "_create", create)
        settings = ConsumerPoolSettings(max_size=1, idle_timeout_s=0.02)
        pool = ConsumerPool(KafkaSettings(bootstrap_servers="127.0.0.1:1"), settings)
        await pool.open()
        async with pool.acquire():
            pass
        await consumer.stopping.wait()  # the reaper is stopping it
        closing = asyncio.create_task(pool.close())
        await asyncio.sleep(0.05)
        assert not closing.done()  # not cancelled halfway through the stop
        consumer.release.set()
        await closing
        assert consumer.stopped

    asyncio.run(run())
