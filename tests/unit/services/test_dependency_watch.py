"""DependencyWatch: one line when a dependency goes down, one when it is back, a gauge always."""

from __future__ import annotations

import asyncio
import logging

import pytest
from kjournal.metrics import RecordingMetrics
from kjournal_service.dependency_watch import DependencyWatch

pytestmark = pytest.mark.anyio


class Switch:
    """A readiness check whose answer the test sets."""

    def __init__(self) -> None:
        self.down: str | None = None
        self.calls = 0
        self.third_call = asyncio.Event()

    async def __call__(self) -> str | None:
        self.calls += 1
        if self.calls == 3:
            self.third_call.set()
        if self.down is not None:
            raise ConnectionError(self.down)
        return None


def _watch(kafka: Switch, metrics: RecordingMetrics) -> DependencyWatch:
    return DependencyWatch("writer", {"kafka": kafka}, metrics, interval_s=0.01, timeout_s=1.0)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kjournal_service.dependency_watch"]


async def test_an_outage_is_two_lines_however_many_checks_fail(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    kafka, metrics = Switch(), RecordingMetrics()
    watch = _watch(kafka, metrics)

    await watch.check_once()
    assert metrics.gauge("kjournal_dependency_up", service="writer", dependency="kafka") == 1
    kafka.down = "connection refused"
    for _ in range(5):
        await watch.check_once()
    assert metrics.gauge("kjournal_dependency_up", service="writer", dependency="kafka") == 0
    kafka.down = None
    await watch.check_once()
    await watch.check_once()

    lines = _lines(caplog)
    assert len(lines) == 2, lines
    assert lines[0] == "kafka is unavailable: connection refused"
    assert lines[1].startswith("kafka is available again, after ")
    assert metrics.gauge("kjournal_dependency_up", service="writer", dependency="kafka") == 1


async def test_a_slow_check_counts_as_down() -> None:
    async def hangs() -> str | None:
        await asyncio.sleep(10)
        return None

    metrics = RecordingMetrics()
    watch = DependencyWatch("reader", {"cassandra": hangs}, metrics, interval_s=1, timeout_s=0.01)
    await watch.check_once()
    assert metrics.gauge("kjournal_dependency_up", service="reader", dependency="cassandra") == 0


async def test_the_watch_runs_in_the_background_until_the_service_stops() -> None:
    kafka, metrics = Switch(), RecordingMetrics()
    async with _watch(kafka, metrics):
        await asyncio.wait_for(kafka.third_call.wait(), timeout=5)
    calls = kafka.calls
    await asyncio.sleep(0.05)
    assert kafka.calls == calls
