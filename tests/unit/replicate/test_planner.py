"""plan_journal: one journal's part of a slice planned as a function of what it is given, which
it leaves as it was."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence

from kjournal.fold.plan import DeleteHead
from kjournal.fold.plan import DeleteRows
from kjournal.fold.plan import InsertHead
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import UpdateHead
from kjournal.fold.plan import Write
from kjournal.model import PartitionOffset
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead
from kjournal.replicate.collect import JournalSlice
from kjournal.replicate.collect import collect
from kjournal.replicate.planner import Cutoff
from kjournal.replicate.planner import JournalPlan
from kjournal.replicate.planner import known_cutoff
from kjournal.replicate.planner import plan_journal
from kjournal.testing.records import KEY
from kjournal.testing.records import T0
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record
from kjournal.testing.records import broken
from kjournal.testing.records import delete_record as delete
from kjournal.testing.records import purge_record as purge
from kjournal.wire.record import ConsumedRecord

RECORD_ID = uuid.UUID(int=7)
SEGMENT_SIZE = 10_000


def journal_of(records: Sequence[ConsumedRecord]) -> JournalSlice:
    return collect(TOPIC, 0, records, None).journals[KEY.id]


def plan(
    journal: JournalSlice, head: JournalHead | None = None, known: Cutoff | None = None
) -> JournalPlan:
    return plan_journal(
        journal,
        head,
        known,
        T0,
        partition=0,
        segment_size=SEGMENT_SIZE,
        new_record_id=lambda: RECORD_ID,
    )


def writes(planned: JournalPlan) -> list[type[Write]]:
    return [type(write) for step in planned.steps for write in step]


def inserted(planned: JournalPlan) -> list[int]:
    return [
        event.seq_nr
        for step in planned.steps
        for write in step
        if isinstance(write, InsertRows)
        for event in write.events
    ]


def test_planning_changes_nothing_it_is_given_and_decides_the_same_each_time() -> None:
    journal = journal_of(
        [
            append_record(0, [1]),
            broken(append_record(1, [2]), value=b"garbage"),
            append_record(2, [3]),
        ]
    )
    head = JournalHead(PartitionOffset(0, 0), SEGMENT_SIZE, SeqNr(1), record_id=RECORD_ID)
    before = copy.deepcopy(journal)
    first = plan(journal, head)
    assert journal == before
    assert plan(journal, head) == first


def test_a_bad_payload_is_where_the_quarantine_starts_and_planning_stops() -> None:
    journal = journal_of(
        [
            append_record(0, [1]),
            broken(append_record(1, [2]), value=b"garbage"),
            append_record(2, [3]),
        ]
    )
    planned = plan(journal)
    assert planned.cutoff is not None
    assert planned.cutoff.offset == 1
    assert planned.cutoff.error is not None
    assert planned.cutoff.error.startswith("payload:")
    assert inserted(planned) == [1]
    assert writes(planned) == [InsertRows, InsertHead]
    assert (planned.batches, planned.events) == (1, 1)


def test_the_first_of_a_bad_header_and_an_earlier_quarantine_is_the_known_cutoff() -> None:
    journal = journal_of(
        [append_record(0, [1]), broken(append_record(1, [2]), header=b"?"), append_record(2, [3])]
    )
    header = known_cutoff(journal, None)
    assert header is not None
    assert header.offset == 1
    assert header.error is not None
    assert known_cutoff(journal, 2) == header
    assert known_cutoff(journal, 0) == Cutoff(0)  # an earlier slice's: no error of this one
    assert known_cutoff(journal_of([append_record(0, [1])]), None) is None


def test_nothing_at_or_after_the_known_cutoff_is_planned() -> None:
    journal = journal_of([append_record(0, [1]), append_record(1, [2]), append_record(2, [3])])
    planned = plan(journal, known=Cutoff(1))
    assert planned.cutoff == Cutoff(1)
    assert inserted(planned) == [1]


def test_a_bad_payload_the_head_covers_is_neither_decoded_nor_planned() -> None:
    journal = journal_of([broken(append_record(5, [3]), value=b"garbage"), append_record(6, [4])])
    head = JournalHead(PartitionOffset(0, 5), SEGMENT_SIZE, SeqNr(3), record_id=RECORD_ID)
    planned = plan(journal, head)
    assert planned.cutoff is None
    assert inserted(planned) == [4]
    assert writes(planned) == [InsertRows, UpdateHead]
    assert planned.head == head


def test_each_batch_is_planned_against_the_head_the_one_before_it_leaves() -> None:
    """After a purge the journal has no head: the append that follows creates a new one, where
    against the loaded head it would only have updated it."""
    journal = journal_of([purge(6), append_record(7, [1]), delete(8, 1)])
    head = JournalHead(PartitionOffset(0, 5), SEGMENT_SIZE, SeqNr(3), record_id=uuid.UUID(int=1))
    planned = plan(journal, head)
    purged = [DeleteRows, DeleteRows, DeleteHead]
    assert writes(planned) == [*purged, InsertRows, InsertHead, DeleteRows, UpdateHead]
    update = planned.steps[-1][0]
    assert isinstance(update, UpdateHead)
    assert update.delete_to == 1
    assert (planned.batches, planned.events) == (3, 1)
    assert planned.head == head  # as loaded


def test_the_appends_the_append_rule_drops_are_returned_not_planned() -> None:
    journal = journal_of([append_record(0, [1]), append_record(1, [1], variant=1)])
    planned = plan(journal)
    assert [d.events[0].seq_nr for d in planned.dropped] == [1]
    assert planned.dropped[0].events[0].partition_offset == PartitionOffset(0, 1)
    assert inserted(planned) == [1]
