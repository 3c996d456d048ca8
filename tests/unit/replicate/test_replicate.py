"""replicate_partition over the in-memory store: what a slice may hold, failure handling and the
poison-record policy. The scenarios every store must pass (kafka-journal's TopicReplicatorSpec)
are kjournal/testing/eventual_store.py's."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest
from kjournal.errors import CassandraUnavailable
from kjournal.fold.plan import Step
from kjournal.memory import InMemoryReplicatedStore
from kjournal.metrics import RecordingMetrics
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead
from kjournal.replicate import replicate_partition
from kjournal.testing.records import KEY
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import at
from kjournal.testing.records import broken
from kjournal.testing.records import delete_record
from kjournal.testing.records import mark_record
from kjournal.wire.record import ConsumedRecord

KEY1 = Key(TOPIC, "id1")
KEY2 = Key(TOPIC, "id2")


def replicate(
    store: InMemoryReplicatedStore,
    records: Sequence[ConsumedRecord],
    now: datetime = T0,
    **kwargs: Any,
) -> Any:
    return replicate_partition(TOPIC, 0, records, store, now, **kwargs)


def seq_nrs(store: InMemoryReplicatedStore, key: Key = KEY) -> list[int]:
    return [event.seq_nr for event in store.events(key)]


# Slices


def test_records_must_be_of_the_partition_and_in_offset_order() -> None:
    store = InMemoryReplicatedStore()
    with pytest.raises(ValueError, match="out of order"):
        replicate(store, [append_record(1, [1]), append_record(1, [2])])
    other = append_record(0, [1])
    wrong = ConsumedRecord(TOPIC, 1, 0, other.key, other.value, other.headers, other.timestamp_ms)
    with pytest.raises(ValueError, match="slice of"):
        replicate(store, [wrong])
    with pytest.raises(ValueError, match="timezone"):
        replicate(store, [], now=datetime(2024, 1, 1))
    assert store.pointer2(TOPIC, 0) is None


def test_records_without_key_or_header_are_ignored_but_counted() -> None:
    store = InMemoryReplicatedStore()
    valid = append_record(0, [1])
    keyless = ConsumedRecord(TOPIC, 0, 1, None, b"x", valid.headers, valid.timestamp_ms)
    no_header = ConsumedRecord(TOPIC, 0, 2, b"id", b"x", [], valid.timestamp_ms)
    result = replicate(store, [valid, keyless, no_header])
    assert (result.records, result.ignored, result.pointer2) == (3, 2, 2)


def test_empty_slice_changes_nothing() -> None:
    store = InMemoryReplicatedStore()
    result = replicate(store, [])
    assert (result.records, result.pointer2) == (0, None)
    assert store.pointer_row(TOPIC, 0) is None


# Failures


class FailingStore(InMemoryReplicatedStore):
    """Its writes for the journals in `failing` fail, as Cassandra would; the others go through."""

    def __init__(self, *failing: Key) -> None:
        super().__init__()
        self.failing = set(failing)

    def write(self, journals: Sequence[tuple[Key, Sequence[Step]]]) -> list[Exception | None]:
        healthy = [(key, steps) for key, steps in journals if key not in self.failing]
        super().write(healthy)
        return [
            CassandraUnavailable(f"down for {key.id}") if key in self.failing else None
            for key, _ in journals
        ]


def test_a_failing_journal_does_not_stop_the_others_but_holds_pointer2() -> None:
    store = FailingStore(KEY1)
    records = [append_record(0, [1], KEY1), append_record(1, [1], KEY2), append_record(2, [1])]
    with pytest.raises(CassandraUnavailable, match="down for id1"):
        replicate(store, records)
    assert seq_nrs(store, KEY2) == [1]
    assert seq_nrs(store, KEY) == [1]
    assert store.pointer2(TOPIC, 0) is None
    store.failing.clear()
    result = replicate(store, records)
    assert result.pointer2 == 2
    assert seq_nrs(store, KEY1) == [1]
    assert result.batches == 1  # the two others were already applied


def test_several_failures_raise_the_first_with_a_note() -> None:
    store = FailingStore(KEY1, KEY2)
    with pytest.raises(CassandraUnavailable) as raised:
        replicate(store, [append_record(0, [1], KEY1), append_record(1, [1], KEY2)])
    assert any("1 other journal" in note for note in raised.value.__notes__)


# Poison records


def test_undecodable_header_is_quarantined_and_the_rest_replicates() -> None:
    store = InMemoryReplicatedStore()
    metrics = RecordingMetrics()
    poison = broken(append_record(1, [2]), header=b"{not json")
    records = [
        append_record(0, [1]),
        poison,
        append_record(2, [1], KEY1),
        append_record(3, [3]),
        mark_record(4),
        delete_record(5, 1),
    ]
    result = replicate(store, records, metrics=metrics)

    assert seq_nrs(store) == [1]  # only what came before the poison record
    assert seq_nrs(store, KEY1) == [1]
    assert store.pointer2(TOPIC, 0) == 5
    quarantined = store.quarantined(TOPIC, "id")
    assert [(q.offset, q.reason.split(":")[0]) for q in quarantined] == [
        (1, "header"),
        (3, "parked"),
        (5, "parked"),
    ]
    first = quarantined[0]
    assert (first.partition, first.id, first.header, first.value) == (
        0,
        "id",
        b"{not json",
        poison.value,
    )
    assert first.timestamp is not None
    assert first.quarantined_at == T0
    assert "offset 1" in quarantined[1].reason
    assert (result.quarantined, result.parked) == (1, 2)
    assert (
        metrics.counter("kjournal_replicator_quarantined_records_total", topic=TOPIC, kind="poison")
        == 1
    )
    assert (
        metrics.counter("kjournal_replicator_quarantined_records_total", topic=TOPIC, kind="parked")
        == 2
    )
    assert store.quarantined_from(TOPIC, 0, ["id", "id1"]) == {"id": 1}
    assert store.quarantined_from(TOPIC, 1, ["id"]) == {"id": -1}


def test_undecodable_payload_is_quarantined_after_applying_what_precedes_it() -> None:
    store = InMemoryReplicatedStore()
    poison = broken(append_record(2, [3]), value=b"\xff not a container")
    records = [
        append_record(0, [1]),
        append_record(1, [2]),
        poison,
        append_record(3, [4]),
        append_record(4, [1], KEY1),
    ]
    result = replicate(store, records)
    assert seq_nrs(store) == [1, 2]
    assert seq_nrs(store, KEY1) == [1]
    head = store.head(KEY)
    assert head is not None
    assert head.partition_offset == at(1)
    quarantined = store.quarantined(TOPIC, "id")
    assert [(q.offset, q.reason.split(":")[0]) for q in quarantined] == [
        (2, "payload"),
        (3, "parked"),
    ]
    assert (result.quarantined, result.parked, result.pointer2) == (1, 1, 4)


def test_payload_that_does_not_match_its_header_is_quarantined() -> None:
    store = InMemoryReplicatedStore()
    liar = broken(append_record(0, [1]), value=append_record(9, [7, 8]).value)
    replicate(store, [liar])
    assert store.head(KEY) is None
    (quarantined,) = store.quarantined(TOPIC, "id")
    assert "do not match" in quarantined.reason


def test_a_quarantined_journal_stays_quarantined_in_later_slices() -> None:
    store = InMemoryReplicatedStore()
    replicate(store, [broken(append_record(0, [1]), header=b"[]x")])
    result = replicate(store, [append_record(1, [1]), mark_record(2), append_record(3, [1], KEY1)])
    assert store.head(KEY) is None
    assert seq_nrs(store, KEY1) == [1]
    assert [q.offset for q in store.quarantined(TOPIC, "id")] == [0, 1]
    assert "behind the quarantined record at offset 0" in store.quarantined(TOPIC, "id")[1].reason
    assert (result.parked, result.pointer2) == (1, 3)

    store.clear_quarantine(TOPIC, "id")  # an operator resolved it
    replicate(store, [append_record(4, [2])])
    assert seq_nrs(store) == [2]


def test_replaying_a_slice_with_a_poison_record_is_idempotent() -> None:
    store = InMemoryReplicatedStore()
    records = [
        append_record(0, [1]),
        broken(append_record(1, [2]), header=b"?"),
        append_record(2, [3]),
    ]
    replicate(store, records)
    store.set_pointer2(TOPIC, 0, 0, T0, insert=False)
    replicate(store, records)
    assert [q.offset for q in store.quarantined(TOPIC, "id")] == [1, 2]
    assert seq_nrs(store) == [1]


def test_a_second_poison_record_behind_the_first_is_parked_with_its_own_error() -> None:
    store = InMemoryReplicatedStore()
    records = [
        broken(append_record(0, [1]), header=b"?"),
        broken(append_record(1, [2]), header=b"!"),
    ]
    replicate(store, records)
    first, second = store.quarantined(TOPIC, "id")
    assert first.reason.startswith("header:")
    assert second.reason.startswith("parked:")
    assert "header:" in second.reason


def test_a_payload_poison_before_a_header_poison_parks_the_header_poison() -> None:
    store = InMemoryReplicatedStore()
    records = [
        append_record(0, [1]),
        broken(append_record(1, [2]), value=b"garbage"),
        append_record(2, [3]),
        broken(append_record(3, [4]), header=b"?"),
    ]
    replicate(store, records)
    assert seq_nrs(store) == [1]
    reasons = [q.reason.split(":")[0] for q in store.quarantined(TOPIC, "id")]
    assert reasons == ["payload", "parked", "parked"]


def test_payload_of_an_append_deleted_in_the_same_slice_is_still_checked() -> None:
    # Whether a record is poison must not depend on how the partition was sliced.
    records = [
        append_record(0, [1]),
        broken(append_record(1, [2]), value=b"garbage"),
        append_record(2, [3]),
        delete_record(3, 2),
    ]
    whole = InMemoryReplicatedStore()
    replicate(whole, records)
    one_by_one = InMemoryReplicatedStore()
    for record in records:
        replicate(one_by_one, [record])
    for store in (whole, one_by_one):
        assert seq_nrs(store) == [1]
        assert [q.offset for q in store.quarantined(TOPIC, "id")] == [1, 2, 3]


def test_payload_of_an_already_replicated_append_is_not_decoded_again() -> None:
    store = InMemoryReplicatedStore()
    store.seed_head(KEY, JournalHead(at(5), 10_000, SeqNr(3)), T0, "origin")
    replicate(store, [broken(append_record(5, [3]), value=b"garbage"), append_record(6, [4])])
    assert store.quarantined(TOPIC, "id") == []
    assert seq_nrs(store) == [4]
