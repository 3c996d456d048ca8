"""Background work started from a traced request is not part of its trace."""

from __future__ import annotations

import asyncio

import pytest
from kjournal.spans import recording
from kjournal.spans import span
from kjournal.spans import untraced

from tests.unit.tracing.conftest import Spans

pytestmark = pytest.mark.anyio


async def test_tasks_started_untraced_record_no_spans_even_after_the_block(spans: Spans) -> None:
    async def background() -> None:
        await asyncio.sleep(0)
        with span("background poll"):
            pass

    with span("request"):
        with untraced():
            assert not recording()
            task = asyncio.create_task(background())
        assert recording()
        with span("request step"):
            pass
    await task
    assert sorted(s.name for s in spans.finished()) == ["request", "request step"]
