"""Closing what runs in the background while it stops a Kafka consumer.

aiokafka's `AIOKafkaConsumer.stop` swallows a cancellation that lands while it waits for its
fetch task; these fakes do the same, so a cancel sent at that moment is lost, as with a real
consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from kjournal.aio import cancel_and_wait
from kjournal.aio import uninterrupted
from kjournal.kafka import consumer_pool
from kjournal.kafka import topic_stream
from kjournal.kafka.consumer_pool import ConsumerPool
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.kafka.settings import KafkaSettings
from kjournal.kafka.topic_stream import KafkaTopicStream


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


class _AiokafkaLikeConsumer:
    """Stops as `AIOKafkaConsumer.stop` does: marked closed first, then its fetcher is stopped
    (a cancellation that lands there is swallowed), then its client is closed; each step takes
    longer than `cancel_and_wait` waits between cancels."""

    def __init__(self) -> None:
        self.closed = False
        self.client_closed = False
        self.polling = asyncio.Event()

    async def start(self) -> None:
        pass

    def assign(self, partitions: list[Any]) -> None:
        pass

    def seek(self, partition: Any, offset: int) -> None:
        pass

    async def getmany(self, *partitions: Any, timeout_ms: int, max_records: int) -> dict[Any, Any]:
        self.polling.set()
        await asyncio.Event().wait()
        return {}

    async def stop(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.25)
        await asyncio.sleep(0.25)  # the fetcher's pending requests
        self.client_closed = True


def test_a_stop_awaited_uninterrupted_ends_though_its_caller_is_cancelled_again_and_again() -> None:
    async def run() -> None:
        consumer = _AiokafkaLikeConsumer()
        stopping = asyncio.Event()

        async def follow() -> None:
            try:
                await asyncio.Event().wait()
            finally:
                stopping.set()
                await uninterrupted(consumer.stop())

        task = asyncio.create_task(follow())
        await asyncio.sleep(0)
        await cancel_and_wait(task)
        assert stopping.is_set()
        assert task.cancelled()
        assert consumer.client_closed

    asyncio.run(run())


def test_following_a_topic_stopped_by_cancel_and_wait_closes_its_consumer_to_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fold's topic stream, stopped as `_TopicFolds.stop` stops it (read/follower.py)."""
    consumer = _AiokafkaLikeConsumer()
    monkeypatch.setattr(topic_stream, "AIOKafkaConsumer", lambda **options: consumer)
    stream = KafkaTopicStream(KafkaSettings(bootstrap_servers="127.0.0.1:1"))

    async def consume() -> None:
        following = stream.follow("topic", {0: 0})
        try:
            async for _ in following:
                pass
        finally:
            await following.aclose()

    async def run() -> None:
        task = asyncio.create_task(consume())
        await consumer.polling.wait()
        await cancel_and_wait(task)

    asyncio.run(run())
    assert consumer.client_closed


def test_a_shutdown_that_fails_while_its_caller_is_cancelled_is_the_cancellations_cause() -> None:
    async def run() -> None:
        async def failing_stop() -> None:
            await asyncio.sleep(0.05)
            raise RuntimeError("the broker went away")

        async def caller() -> None:
            await uninterrupted(failing_stop())

        task = asyncio.create_task(caller())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError) as raised:
            await task
        assert isinstance(raised.value.__cause__, RuntimeError)

    asyncio.run(run())


class _BootstrappingConsumer:
    """Starts as `AIOKafkaConsumer.start` does: a bootstrap connection of its own, closed once the
    metadata came (not when a cancel came instead)."""

    def __init__(self) -> None:
        self.bootstrap_open = False
        self.starting = asyncio.Event()
        self.stopped = False

    async def start(self) -> None:
        self.bootstrap_open = True
        self.starting.set()
        await asyncio.sleep(0.25)  # the metadata request
        self.bootstrap_open = False

    async def stop(self) -> None:
        self.stopped = True


def test_a_consumer_started_for_a_caller_cancelled_meanwhile_is_started_then_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    consumer = _BootstrappingConsumer()
    monkeypatch.setattr(consumer_pool, "AIOKafkaConsumer", lambda **options: consumer)

    async def run() -> None:
        pool = ConsumerPool(KafkaSettings(bootstrap_servers="127.0.0.1:1"), ConsumerPoolSettings())

        async def use() -> None:
            async with pool.acquire("topic"):
                pass

        task = asyncio.create_task(use())
        await consumer.starting.wait()
        await cancel_and_wait(task)
        assert task.cancelled()

    asyncio.run(run())
    assert not consumer.bootstrap_open
    assert consumer.stopped


_ROOT = Path(__file__).parents[3]
_BARE_START_OR_STOP = re.compile(r"await\s+[\w.]+\.(start|stop|close)\(\)")


def test_every_aiokafka_client_is_started_and_stopped_uninterrupted() -> None:
    """A start or stop cut short leaks a connection (see `kjournal.aio.uninterrupted`)."""
    sources = [*_ROOT.glob("libs/*/src/**/*.py"), *_ROOT.glob("services/*/src/**/*.py")]
    users = [
        path for path in sources if re.search(r"^(from|import) aiokafka", path.read_text(), re.M)
    ]
    assert len(users) >= 5  # the glob found the Kafka modules
    bare = [
        f"{path.relative_to(_ROOT)}: {match.group(0)}"
        for path in users
        for match in _BARE_START_OR_STOP.finditer(path.read_text())
    ]
    assert bare == []
