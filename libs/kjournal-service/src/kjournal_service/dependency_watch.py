"""One log line when a dependency goes down, one when it comes back.

The readiness checks (Kafka answers a metadata request, Cassandra a query) run in the background
every `interval_s`; a change of state is logged once, with how long the outage lasted, and every
state is published as `kjournal_dependency_up{service,dependency}` (1 or 0). The client libraries'
own lines during an outage are throttled (log_limits.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from kjournal.aio import AsyncResource
from kjournal.aio import cancel_and_wait
from kjournal.metrics import Metrics
from kjournal.metrics.catalogue import DEPENDENCY_UP
from kjournal.spans import untraced

from kjournal_service.readiness import Check
from kjournal_service.readiness import check_readiness

__all__ = ["DependencyWatch"]

log = logging.getLogger(__name__)


@dataclass(eq=False)
class DependencyWatch(AsyncResource):
    service: str
    checks: Mapping[str, Check]
    metrics: Metrics
    interval_s: float
    timeout_s: float
    _down_since: dict[str, float] = field(default_factory=dict, init=False)
    _task: asyncio.Task[None] | None = field(default=None, init=False)

    async def open(self) -> None:
        with untraced():  # a check every few seconds is not worth a trace each
            self._task = asyncio.create_task(self._run(), name="kjournal-dependency-watch")

    async def close(self) -> None:
        await cancel_and_wait(self._task)

    async def check_once(self) -> None:
        report = await check_readiness(self.checks, self.timeout_s)
        now = time.monotonic()
        for name, result in report.checks.items():
            self.metrics.set(
                DEPENDENCY_UP.name,
                1 if result.ok else 0,
                service=self.service,
                dependency=name,
            )
            since = self._down_since.get(name)
            if not result.ok and since is None:
                self._down_since[name] = now
                log.warning("%s is unavailable: %s", name, result.detail)
            elif result.ok and since is not None:
                del self._down_since[name]
                log.warning("%s is available again, after %.0f s", name, now - since)

    async def _run(self) -> None:
        while True:
            try:
                await self.check_once()
            except Exception:  # a watch must never take the service down
                log.exception("checking dependencies failed")
            await asyncio.sleep(self.interval_s)
