"""The reader's cap on concurrent streamed reads (over ASGI, fake journals whose reads wait): one
more than the cap is 503 `busy` with Retry-After at once; a slot is held while its answer
streams and given back however the request ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime

import httpx
import pytest
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal_reader.settings import Settings
from kjournal_reader.state import ReaderState

from tests.unit.services.fakes import FakeJournal
from tests.unit.services.fakes import FakeJournals
from tests.unit.services.fakes import reader_over

pytestmark = pytest.mark.anyio


class HeldJournal(FakeJournal):
    """Streams one event, then waits for `release` before the second."""

    release = asyncio.Event()
    waiting = 0
    all_waiting = asyncio.Event()

    async def read(
        self, from_: int = 1, to: int = 2**63 - 1, limit: int | None = None
    ) -> AsyncIterator[EventRecord]:
        at = datetime(2025, 1, 1, tzinfo=UTC)
        yield EventRecord(Event(SeqNr(1)), at, PartitionOffset(0, 1))
        HeldJournal.waiting += 1
        if HeldJournal.waiting == 2:
            HeldJournal.all_waiting.set()
        await self.release.wait()
        yield EventRecord(Event(SeqNr(2)), at, PartitionOffset(0, 2))


class HeldJournals(FakeJournals):
    def journal(self, key: Key) -> FakeJournal:
        return self.journals.setdefault(key, HeldJournal(key))


async def test_one_stream_more_than_the_cap_is_busy():
    HeldJournal.release, HeldJournal.all_waiting = asyncio.Event(), asyncio.Event()
    app = reader_over(
        HeldJournals(), Settings.model_validate({"http": {"max_concurrent_streams": 2}})
    )
    slots = ReaderState.of(app).stream_slots
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://reader") as client:
        held = [
            asyncio.create_task(client.get(f"/v1/journals/journal/j-{n}/events")) for n in (1, 2)
        ]
        await HeldJournal.all_waiting.wait()
        assert slots.in_use == 2
        busy = await client.get("/v1/journals/journal/j-3/events")
        assert busy.status_code == 503
        assert busy.headers["content-type"] == "application/problem+json"
        assert busy.headers["retry-after"] == "1"
        assert busy.json()["type"] == "urn:kjournal:problem:busy"
        assert "2 streamed reads are in progress" in busy.json()["detail"]
        assert slots.in_use == 2  # the refused request took none
        HeldJournal.release.set()
        for task in held:
            response = await task
            assert response.status_code == 200
            assert len(response.text.splitlines()) == 2
        assert slots.in_use == 0
        # a refused query (validation error after the slot was taken) gives it back too
        bad = await client.get("/v1/journals/journal/j-1/events?from=x")
        assert bad.status_code == 400
        assert slots.in_use == 0
        ok = await client.get("/v1/journals/journal/j-1/events")
        assert ok.status_code == 200
        assert slots.in_use == 0
