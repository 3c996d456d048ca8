"""JournalSpec on the real stack: every read equals the fully replicated truth, whatever part of the
journal is still only in Kafka, with the tail cache on and off."""

from __future__ import annotations

import pytest
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr

from tests.integration.read.conftest import Stack
from tests.integration.read.conftest import read_all

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.anyio]

Op = tuple[str, int, int]  # kind, first, last


def a(first: int, last: int | None = None) -> Op:
    return "append", first, first if last is None else last


def d(to: int) -> Op:
    return "delete", 0, to


PURGE: Op = ("purge", 0, 0)
MARK: Op = ("mark", 0, 0)

SEQUENCES: dict[str, list[Op]] = {
    "appends": [a(1), a(2, 3), a(4, 6)],
    "append 1, delete 3, append 2..3, delete 2, append 4": [a(1), d(3), a(2, 3), d(2), a(4)],
    "delete all then more": [a(1, 3), d(3), MARK, a(4)],
    "purge and re-append": [a(1, 3), PURGE, a(1, 2), MARK],
    "deletes interleaved with marks": [a(1, 5), MARK, d(2), a(6), d(4), MARK],
}


async def write(stack: Stack, key: Key, ops: list[Op]) -> None:
    journal = stack.writer.journal(key)
    for kind, first, last in ops:
        if kind == "append":
            events = [
                Event(SeqNr(n), frozenset({"t"}), JsonPayload({"n": n}))
                for n in range(first, last + 1)
            ]
            await journal.produce(events)
        elif kind == "delete":
            await journal.delete(last)  # write-only Journals: sent as given
        elif kind == "purge":
            await journal.purge()
        else:
            await journal.mark()


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_reads_equal_the_replicated_truth_in_every_replication_state(stack: Stack, name: str):
    key = Key(stack.topic, f"entity-{len(name)}")
    await write(stack, key, SEQUENCES[name])
    await stack.writer.journal(Key(stack.topic, "neighbour")).produce([Event(SeqNr(1))])
    truth = await stack.truth(key)
    end = (await stack.writer.journal(key).mark()).offset + 1  # the mark is the partition's last

    async def check(state: str) -> None:
        for cache in (False, True):
            async with stack.reading(fold=cache) as journals:
                assert await read_all(journals, key) == truth, f"{state}, tail cache {cache}"

    await check("cassandra empty")
    for behind in (3, 2, 1):
        await stack.replicate({0: end - behind})
        await check(f"{behind} records behind")
    await stack.replicate()
    await check("consistent")
    # a replicator that applied everything but crashed before moving pointer2
    pointer = stack.store.pointer2(stack.topic, 0)
    assert pointer is not None
    from datetime import UTC
    from datetime import datetime

    stack.store.set_pointer2(stack.topic, 0, pointer - 3, datetime.now(UTC), insert=False)
    await check("pointer 3 behind")


async def test_ranges_and_limits_across_both_sources(stack: Stack):
    key = Key(stack.topic, "ranges")
    await write(stack, key, [a(1, 4), a(5, 8), d(2), a(9, 12)])
    await stack.replicate({0: 2})  # the first two appends are in Cassandra
    truth, _ = await stack.truth(key)
    async with stack.reading(fold=False) as journals:
        for from_, to, limit in [(1, 20, 100), (4, 10, 3), (6, 6, 1), (9, 12, 10), (13, 20, 5)]:
            events, _ = await read_all(journals, key, from_=from_, to=to, limit=limit)
            assert events == [e for e in truth if from_ <= e[0] <= to][:limit]


@pytest.mark.parametrize("cache", [False, True])
async def test_a_pending_delete_or_purge_is_honoured_on_the_first_event(stack: Stack, cache: bool):
    deleted, purged = Key(stack.topic, "deleted"), Key(stack.topic, "purged")
    await write(stack, deleted, [a(1, 10)])
    await write(stack, purged, [a(1, 10)])
    await stack.replicate()
    await write(stack, deleted, [d(7)])  # only in Kafka
    await write(stack, purged, [PURGE])  # only in Kafka

    async with stack.reading(fold=cache) as journals:
        first = [r.seq_nr async for r in journals.journal(deleted).read(limit=1)]
        assert first == [8]
        assert [r async for r in journals.journal(purged).read()] == []
        assert await journals.journal(purged).pointer() is None
        status = await journals.journal(deleted).status()
        assert (status.seq_nr, status.delete_to, status.unreplicated_actions) == (10, 7, 1)
