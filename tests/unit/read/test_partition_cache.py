"""The tail cache's per-partition state: complete answers or "unknown", never a guess."""

from __future__ import annotations

from datetime import UTC, datetime

from kjournal.kafka.partition_cache import PartitionCache, PayloadBudget
from kjournal.model import (
    ActionRecord,
    Append,
    Delete,
    DeleteHeader,
    Event,
    Events,
    JsonPayload,
    Key,
    PartitionOffset,
    SeqNr,
)
from kjournal.wire.record import append_action

NOW = datetime(2026, 11, 22, tzinfo=UTC)


def append(id: str, offset: int, seq: int) -> ActionRecord:
    events = Events((Event(SeqNr(seq), payload=JsonPayload({"seq": seq})),))
    return ActionRecord(append_action(Key("journal", id), NOW, events), PartitionOffset(0, offset))


def delete(id: str, offset: int, to: int) -> ActionRecord:
    action = Delete(Key("journal", id), NOW, DeleteHeader(SeqNr(to)))
    return ActionRecord(action, PartitionOffset(0, offset))


def cache_with(
    *records: ActionRecord, replicated: int = -1, budget: int = 1 << 20, max_journals: int = 100
) -> PartitionCache:
    cache = PartitionCache(replicated, max_journals, PayloadBudget(budget))
    for record in records:
        cache.add(record.action.key.id, record)
        cache.seen(record.offset)
    return cache


def offsets(tail: object) -> list[int]:
    return [a.offset for a in tail.actions]  # type: ignore[attr-defined]


def test_a_journal_s_actions_in_the_asked_range():
    cache = cache_with(append("a", 0, 1), append("b", 1, 1), delete("a", 2, 1), append("a", 3, 2))

    tail = cache.tail("a", 1, 4)

    assert tail is not None
    assert offsets(tail) == [2, 3]
    assert tail.payloads_from is None


def test_a_journal_with_nothing_unreplicated_is_known_empty():
    cache = cache_with(append("a", 0, 1))

    tail = cache.tail("z", 0, 1)

    assert tail is not None
    assert tail.actions == ()


def test_unknown_while_the_consumer_has_not_reached_the_end():
    cache = cache_with(append("a", 0, 1))

    assert cache.tail("a", 0, 5) is None
    cache.seen(4)
    assert cache.tail("a", 0, 5) is not None


def test_unknown_when_the_cache_already_dropped_part_of_the_range():
    cache = cache_with(append("a", 0, 1), append("a", 1, 2), append("a", 2, 3))
    cache.replicated_up_to(1)

    assert cache.tail("a", 1, 3) is None  # offset 1 was dropped: cannot answer from 1
    tail = cache.tail("a", 2, 3)
    assert tail is not None
    assert offsets(tail) == [2]


def test_pointer2_drops_replicated_actions_and_forgets_caught_up_journals():
    cache = cache_with(append("a", 0, 1), append("b", 1, 1), append("a", 2, 2))
    cache.replicated_up_to(1)

    assert cache.journals == 1
    cache.replicated_up_to(2)
    assert cache.journals == 0


def test_evicted_journals_are_unknown_not_empty():
    records = [append(f"j{n}", n, 1) for n in range(10)]
    cache = cache_with(*records, max_journals=10)
    cache.add("new", append("new", 10, 1))
    cache.seen(10)

    assert cache.tail("j0", 0, 11) is None  # evicted: the cache cannot know
    assert cache.tail("never-seen", 0, 11) is None  # could have been evicted too
    assert cache.tail("never-seen", 1, 11) is not None  # above every evicted offset: known
    assert cache.tail("new", 0, 11) is None  # offset 0 was evicted: whose was it?
    tail = cache.tail("new", 1, 11)
    assert tail is not None
    assert offsets(tail) == [10]


def test_payloads_past_the_budget_are_dropped_and_flagged_for_rereading():
    first, second = append("a", 0, 1), append("a", 1, 2)
    assert isinstance(first.action, Append)
    cache = cache_with(first, second, budget=len(first.action.payload))

    tail = cache.tail("a", 0, 2)

    assert tail is not None
    assert tail.payloads_from == 1
    kept = [a.action.payload for a in tail.actions]  # type: ignore[union-attr]
    assert kept[0] == first.action.payload
    assert kept[1] == b""


def test_payload_budget_is_returned_when_pointer2_passes():
    budget = PayloadBudget(1 << 20)
    cache = PartitionCache(-1, 100, budget)
    record = append("a", 0, 1)
    cache.add("a", record)
    assert budget.used > 0

    cache.replicated_up_to(0)

    assert budget.used == 0
