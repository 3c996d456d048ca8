"""Every seqNr the API accepts reads back, at both ends of the range, before and after
replication: 2^63-1 is a Cassandra bigint, but the end of its segment ((segment + 1) * size) is
not, and binding it failed every read of the journal once replicated. And no seqNr makes a
journal unreadable: a gap is bounded (append_rule.MAX_GAP), a purge deletes only segments that
can hold rows."""

from __future__ import annotations

import pytest
from kjournal.fold.append_rule import MAX_GAP
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Event
from kjournal.model import ExpireAfter
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PayloadMetadata
from kjournal.model import RecordMetadata
from kjournal.model import SeqNr
from kjournal.model.expire_after import MAX_NANOS

from tests.integration.read.conftest import Stack
from tests.integration.read.conftest import read_all

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.anyio]

MAX = SEQ_NR_MAX


def _events(*seq_nrs: int) -> list[Event]:
    return [Event(SeqNr(n), payload=JsonPayload(str(n))) for n in seq_nrs]


async def _reads(stack: Stack, key: Key) -> dict[str, object]:
    """What the boundary reads of `key` return, by name (the same with the tail cache on)."""
    without_cache = await _reads_with(stack, key, fold=False)
    assert await _reads_with(stack, key, fold=True) == without_cache
    return without_cache


async def _reads_with(stack: Stack, key: Key, *, fold: bool) -> dict[str, object]:
    async with stack.reading(fold=fold) as journals:
        reads: dict[str, object] = {
            "all": await read_all(journals, key),
            "from max": await read_all(journals, key, from_=MAX),
            "from max to max": await read_all(journals, key, from_=MAX, to=MAX),
            "to max-1": await read_all(journals, key, to=MAX - 1),
            "from 1 to 1": await read_all(journals, key, from_=1, to=1),
            "limit 1": await read_all(journals, key, limit=1),
        }
        status = await journals.journal(key).status()
    reads["status"] = (status.seq_nr, status.delete_to)
    return reads


async def test_the_largest_seq_nr_reads_back_before_and_after_replication(stack: Stack) -> None:
    key = Key(stack.topic, "largest")
    await stack.writer.journal(key).produce(_events(MAX - 1, MAX))
    expected = {
        "all": ([(MAX - 1, str(MAX - 1)), (MAX, str(MAX))], MAX),
        "from max": ([(MAX, str(MAX))], MAX),
        "from max to max": ([(MAX, str(MAX))], MAX),
        "to max-1": ([(MAX - 1, str(MAX - 1))], MAX),
        "from 1 to 1": ([], MAX),
        "limit 1": ([(MAX - 1, str(MAX - 1))], MAX),
        "status": (MAX, MAX - 2),  # a journal that begins at N has had 1..N-1 deleted
    }
    assert await _reads(stack, key) == expected, "only in Kafka"
    await stack.replicate()
    assert await _reads(stack, key) == expected, "replicated"


async def test_a_delete_to_the_largest_seq_nr_deletes_everything(stack: Stack) -> None:
    key = Key(stack.topic, "deleted")
    journal = stack.writer.journal(key)
    await journal.produce(_events(MAX - 2, MAX - 1))
    await stack.replicate()
    await journal.delete(MAX)
    empty = {
        "all": ([], MAX - 1),
        "from max": ([], MAX - 1),
        "from max to max": ([], MAX - 1),
        "to max-1": ([], MAX - 1),
        "from 1 to 1": ([], MAX - 1),
        "limit 1": ([], MAX - 1),
        "status": (MAX - 1, MAX - 1),  # never a delete beyond the last seqNr
    }
    assert await _reads(stack, key) == empty, "the delete only in Kafka"
    await stack.replicate()
    assert await _reads(stack, key) == empty, "replicated"
    await journal.produce(_events(MAX))
    await stack.replicate()
    reads = await _reads(stack, key)
    assert reads["all"] == ([(MAX, str(MAX))], MAX)
    assert reads["status"] == (MAX, MAX - 1)


async def test_the_smallest_seq_nr_and_the_longest_expiry(stack: Stack) -> None:
    key = Key(stack.topic, "smallest")
    journal = stack.writer.journal(key)
    longest = RecordMetadata(payload=PayloadMetadata(expire_after=ExpireAfter(MAX_NANOS)))
    await journal.produce(_events(1), longest)
    await stack.replicate()
    async with stack.reading(fold=False) as journals:
        assert await read_all(journals, key) == ([(1, "1")], 1)
        status = await journals.journal(key).status()
    assert status.expiry is not None
    assert status.expiry.after == ExpireAfter(MAX_NANOS)


async def test_an_append_skipping_past_max_gap_is_dropped_and_the_journal_stays_readable(
    stack: Stack,
) -> None:
    """1, then 2^63-1: taken, the reads of the journal would walk ~10^14 empty segments. The
    append rule drops it (a gap of more than MAX_GAP), so every reader returns 1 only."""
    key = Key(stack.topic, "gap")
    journal = stack.writer.journal(key)
    await journal.produce(_events(1))
    await journal.produce(_events(MAX))
    await journal.produce(_events(2 + MAX_GAP))  # the largest gap allowed
    expected = ([(1, "1"), (2 + MAX_GAP, str(2 + MAX_GAP))], 2 + MAX_GAP)
    async with stack.reading(fold=True) as journals:
        assert await read_all(journals, key) == expected, "only in Kafka"
    await stack.replicate()
    async with stack.reading(fold=False) as journals:
        assert await read_all(journals, key) == expected, "replicated"
        assert (await journals.journal(key).status()).seq_nr == 2 + MAX_GAP


async def test_a_purge_of_a_journal_begun_far_up_erases_it(stack: Stack) -> None:
    """A journal that starts at 2^63-1 and is purged in the same slice: the replicator deletes
    the rows of its segment, not every segment from the first (~10^14 of them)."""
    key = Key(stack.topic, "far-up-purged")
    journal = stack.writer.journal(key)
    await journal.produce(_events(1))
    await journal.purge()
    await journal.produce(_events(MAX))
    await journal.purge()
    await stack.replicate()
    async with stack.reading(fold=False) as journals:
        assert await read_all(journals, key) == ([], None)
    await journal.produce(_events(1))
    await stack.replicate()
    async with stack.reading(fold=False) as journals:
        assert await read_all(journals, key) == ([(1, "1")], 1)
