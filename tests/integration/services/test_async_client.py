"""The asyncio client against the real services: the same journal life as the sync client."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest
from kjournal.client import AsyncClient
from kjournal.errors import SeqNrGap
from kjournal.errors import SeqNrOrderError
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr

from tests.integration.services.support import RunningService

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


async def _life(writer: str, reader: str, key: Key) -> None:
    async with AsyncClient(writer, reader) as client:
        assert await client.pointer(key) is None
        results = [
            await client.append(key, [Event(SeqNr(n), payload=JsonPayload(n))])
            for n in range(1, 11)
        ]
        assert [r.range.to for r in results] == list(range(1, 11))
        with pytest.raises(SeqNrOrderError):
            await client.append(key, [Event(SeqNr(12)), Event(SeqNr(11))])
        with pytest.raises(SeqNrGap) as gap:  # in Kafka, and dropped by every reader
            await client.append(key, [Event(SeqNr(2**63 - 1))])
        assert (gap.value.seq_nr, gap.value.first_seq_nr) == (10, 2**63 - 1)

        assert [r.seq_nr async for r in client.read(key)] == list(range(1, 11))
        async with aclosing(client.read(key, from_=3)) as records:
            first = await anext(records)  # stop early: the stream is closed, not drained
        assert first.seq_nr == 3
        assert [r.seq_nr async for r in client.read(key, 4, 6)] == [4, 5, 6]

        status = await client.status(key)
        assert status is not None
        assert status.seq_nr == 10
        await client.delete(key, 5)
        assert [r.seq_nr async for r in client.read(key)] == [6, 7, 8, 9, 10]
        marked = await client.mark(key)
        assert marked.partition_offset.partition == results[0].partition_offset.partition
        await client.purge(key)
        assert await client.pointer(key) is None
        # 11 appends (one dropped), delete, mark, purge
        assert (await client.replication(key.topic)).lag == 14
        assert (await client.ready("writer")).status == "ready"


def test_the_async_client(writer: RunningService, reader: RunningService, topic: str):
    asyncio.run(_life(writer.url, reader.url, Key(topic, "async-1")))
