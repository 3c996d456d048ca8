"""The read side: what readers return, and what the append rule made of each record.

    settings.py        FoldSettings (the `fold` section of the reader's settings)
    tail.py            a journal's records in Kafka after pointer2 (Tail), and the Kafka ports
    journal_entry.py   one journal as its partition's fold knows it (base, tail, state)
    fates.py           what the append rule made of a record (Fate)
    bootstrap.py       where the fold starts a journal it meets: from Cassandra's head, pure
    partition_fold.py  the fold of one partition: every record decided once, as it is consumed
    follower.py        the folds of every topic asked about, fed by one consumer per topic
    view.py            a journal as a read sees it (JournalView) and its events, merged from
                       Cassandra and the tail (JournalReader)
    outcome.py         an append's outcome (the writer's answer): from the fold, or scanned

docs/architecture.md draws the whole; docs/concurrency.md ("The fold") says what the fold
guarantees.
"""

from kjournal.read.follower import Follower
from kjournal.read.outcome import LocalOutcomes
from kjournal.read.outcome import scanned_outcome
from kjournal.read.settings import FoldSettings
from kjournal.read.tail import Tail
from kjournal.read.view import JournalReader
from kjournal.read.view import JournalView
from kjournal.read.view import event_records

__all__ = [
    "FoldSettings",
    "Follower",
    "JournalReader",
    "JournalView",
    "LocalOutcomes",
    "Tail",
    "event_records",
    "scanned_outcome",
]
