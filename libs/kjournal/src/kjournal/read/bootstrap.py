"""Where the fold starts a journal it meets for the first time: pure, from what Cassandra said.

The fold has consumed its partition from some offset on; a journal it meets at offset o needs its
state before o. Cassandra has it, as the journal's head, but the replicator may have moved the
head past o meanwhile, or a purge may have deleted it. So the reader reads pointer2 first (B =
pointer2 + 1: the head holds every record of the journal below B), then the head and the
quarantine flag, then the partition's end E, and waits until the fold has consumed up to E: every
record the replicator could have applied before the head was read is then in the *window*, the
journal's records in [B, E). From the head and the window:

* a head whose offset is below B is the journal just before B: every record of the window is the
  fold's to decide;
* a head at or after B already holds the window's records up to its offset: the fold continues
  from the head, and the fates of those records are not its to tell (`FateKind` UNKNOWN: the
  outcome's slow path answers for them);
* no head and no purge in the window: the journal did not exist before B;
* no head but a purge in the window: the journal does not exist after the window's first purge
  (whether or not that purge is replicated yet); the records up to it are not the fold's to
  tell (whether the journal existed before it, only the purged head knew).

A quarantine row holds the journal from its record on (from B, if its record lies in another
partition), and so does a record of the window that does not decode: the replicator quarantines
the journal there, and a purge does not lift a quarantine. A head in another partition means the
topic was repartitioned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kjournal.errors import TopicRepartitioned
from kjournal.model import ActionRecord
from kjournal.model import Key
from kjournal.model import Purge
from kjournal.model.head import JournalHead
from kjournal.model.quarantine import QuarantinedRecord
from kjournal.read.journal_entry import Base
from kjournal.read.records import Poison

__all__ = ["Start", "start_of"]


@dataclass(frozen=True, slots=True)
class Start:
    """Where the fold starts a journal: its base, from which offset its records' fates are the
    fold's, and whether it is quarantined or unreadable."""

    base: Base
    exact_from: int
    quarantined_at: int | None = None
    reason: str | None = None
    error: Exception | None = None


def start_of(
    key: Key,
    partition: int,
    head: JournalHead | None,
    quarantined: QuarantinedRecord | None,
    start: int,
    window: Sequence[ActionRecord | Poison],
    unmet: bool = False,
) -> Start:
    """The journal's start (see the module docstring): `start` is B, `window` the journal's
    records in [B, E) in offset order, those that do not decode included. `unmet`: the journal
    has no record in the partition below B (the fold consumed it from its first record and never
    met the journal before): it did not exist before B, whatever its head says since."""
    if head is not None and head.partition_offset.partition != partition:
        error = TopicRepartitioned(key.topic, key.id, head.partition_offset.partition, partition)
        return Start(Base(), start, error=error)
    if unmet:
        base, exact_from = Base(), start
    elif head is not None:
        base = Base.of_head(head)
        exact_from = max(start, base.offset + 1)
    else:
        purges = [
            item.offset
            for item in window
            if isinstance(item, ActionRecord) and isinstance(item.action, Purge)
        ]
        exact_from = purges[0] + 1 if purges else start
        base = Base(offset=purges[0]) if purges else Base()
    poison = next((item for item in window if isinstance(item, Poison)), None)
    if poison is not None:  # quarantined from it on, purges or not: the fold decides from it
        exact_from = min(exact_from, poison.offset)
    if quarantined is None:
        return Start(base, exact_from)
    at = quarantined.offset if quarantined.partition == partition else start
    return Start(base, min(exact_from, at), at, quarantined.reason)
