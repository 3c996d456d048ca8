"""Readiness: run a service's dependency checks concurrently, each under a deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping

from kjournal.api.schemas import ReadinessCheck
from kjournal.api.schemas import ReadinessOut

__all__ = ["Check", "check_readiness"]

# A check returns a short detail (e.g. a version) or raises when the dependency is not usable.
Check = Callable[[], Awaitable[str | None]]


async def _run(check: Check, timeout_s: float) -> ReadinessCheck:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            detail = await check()
    except TimeoutError:
        return ReadinessCheck(
            ok=False,
            seconds=round(time.perf_counter() - started, 4),
            detail=f"no answer within {timeout_s} s",
        )
    except Exception as exc:
        return ReadinessCheck(
            ok=False, seconds=round(time.perf_counter() - started, 4), detail=str(exc)
        )
    return ReadinessCheck(ok=True, seconds=round(time.perf_counter() - started, 4), detail=detail)


async def check_readiness(checks: Mapping[str, Check], timeout_s: float) -> ReadinessOut:
    names = list(checks)
    results = await asyncio.gather(*(_run(checks[name], timeout_s) for name in names))
    outcome = dict(zip(names, results, strict=True))
    ready = all(result.ok for result in results)
    return ReadinessOut(status="ready" if ready else "not ready", checks=outcome)
