"""Reads with the replicator offline, in a crowded topic, and over a journal larger than the memory
the read may use."""

from __future__ import annotations

import asyncio
import tracemalloc

import pytest
from kjournal.kafka.settings import ConsumerPoolSettings
from kjournal.model import BinaryPayload
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.wire.partitioner import partition_for
from kjournal_dev.platform.replay import end_offsets

from tests.integration.read.conftest import Stack
from tests.integration.read.conftest import read_all

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.anyio]


@pytest.mark.parametrize("partitions", [4])
async def test_replicator_offline_then_half_then_all(stack: Stack):
    journals_count, events_each, per_append = 100, 100, 10
    keys = [Key(stack.topic, f"offline-{n}") for n in range(journals_count)]

    async def fill(key: Key) -> None:
        journal = stack.writer.journal(key)
        for first in range(1, events_each + 1, per_append):
            await journal.produce(
                [
                    Event(SeqNr(n), payload=JsonPayload({"n": n}))
                    for n in range(first, first + per_append)
                ]
            )
        await journal.delete(5)

    await asyncio.gather(*(fill(key) for key in keys))
    expected = list(range(6, events_each + 1))

    async def check(stage: str) -> None:
        async with (
            stack.reading(fold=True) as cached,
            stack.reading(fold=False) as plain,
        ):
            for journals in (cached, plain):
                for key in keys:
                    events, pointer = await read_all(journals, key)
                    assert [seq for seq, _ in events] == expected, f"{stage}: {key}"
                    assert pointer == events_each

    await check("nothing replicated")
    ends = await end_offsets(stack.bootstrap, stack.topic, stack.partitions)
    await stack.replicate({p: end // 2 for p, end in ends.items()})
    await check("half replicated")
    await stack.replicate()
    await check("all replicated")


async def test_a_new_journal_in_a_crowded_topic_decodes_only_its_own_payloads(stack: Stack):
    others = [Key(stack.topic, f"crowd-{n}") for n in range(200)]
    assert {partition_for(k.id.encode(), 1) for k in others} == {0}
    for key in others:
        await stack.writer.journal(key).produce(
            [Event(SeqNr(n), payload=JsonPayload({"filler": "x" * 200})) for n in range(1, 11)]
        )
    newcomer = Key(stack.topic, "newcomer")
    await stack.writer.journal(newcomer).produce([Event(SeqNr(1), payload=JsonPayload({"hi": 1}))])

    for cache in (False, True):
        before = stack.metrics.counter_total("kjournal_read_payloads_decoded_total")
        async with stack.reading(fold=cache) as journals:
            events, pointer = await read_all(journals, newcomer)
        assert events == [(1, {"hi": 1})]
        assert pointer == 1
        decoded = stack.metrics.counter_total("kjournal_read_payloads_decoded_total") - before
        assert decoded == 1, f"tail cache {cache}: decoded {decoded} payloads"
    scanned = stack.metrics.counter_total("kjournal_kafka_tail_records_scanned_total")
    assert scanned >= 201  # the scan walked past every other journal's record ...


async def test_a_large_journal_streams_with_bounded_memory(stack: Stack):
    key = Key(stack.topic, "large")
    journal = stack.writer.journal(key)
    blob = bytes(range(256)) * 4  # 1 KiB per event
    events_total, per_append = 40_000, 200
    for first in range(1, events_total + 1, per_append):
        await journal.produce(
            [Event(SeqNr(n), payload=BinaryPayload(blob)) for n in range(first, first + per_append)]
        )
    ends = await end_offsets(stack.bootstrap, stack.topic, 1)
    await stack.replicate({0: ends[0] // 2})  # half in Cassandra, half only in Kafka
    journal_bytes = events_total * len(blob)

    async with stack.reading(
        fold=False, consumer_pool=ConsumerPoolSettings(scan_payload_budget_bytes=1 << 20)
    ) as journals:
        tracemalloc.start()
        try:
            count, last = 0, 0
            async for record in journals.journal(key).read():
                assert record.seq_nr == last + 1
                last = record.seq_nr
                count += 1
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

    assert count == events_total
    assert peak < journal_bytes / 4, f"peak {peak} bytes while reading {journal_bytes} bytes"
