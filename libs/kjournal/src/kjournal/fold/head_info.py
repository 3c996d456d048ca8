"""HeadInfo: the unreplicated tail of a journal, folded onto its replicated head.

The fold replays the tail's action headers with the replicator's own head rules
(docs/replication.md §3), so a read merged from Cassandra and the tail returns exactly what
Cassandra will hold once replication has caught up. It needs headers only, so it is known before
the first event is emitted.

Appends are taken or dropped whole by the append rule (fold/append_rule.py), the one the
replicator applies: a dropped append changes nothing and its offset is listed in `dropped`, so
reads skip its events. Actions the head already covers (at or below its offset: the replicator
wrote the head before moving pointer2) are not folded again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace

from kjournal.fold.append_rule import takes
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import Mark
from kjournal.model import Purge
from kjournal.model import SeqNr
from kjournal.model.head import JournalHead


@dataclass(frozen=True, slots=True)
class HeadInfo:
    """What reading must know before the first event.

    seq_nr, delete_to: the journal head as it will be after replication (None: no journal).
    hide_to: events with seqNr ≤ hide_to are deleted (0: none).
    purged_at: the offset of the tail's last effective purge: Cassandra's events and the tail's
        appends before it are gone (None: no purge in the tail).
    appends, actions: how many appends and actions of this journal are still only in Kafka.
    duplicates: how many of those appends the append rule drops (replays, refusals, conflicts).
    dropped: their offsets, in order.
    first_offset: the offset of the first of them, None if there are none.
    """

    seq_nr: SeqNr | None = None
    delete_to: SeqNr | None = None
    hide_to: int = 0
    purged_at: int | None = None
    appends: int = 0
    actions: int = 0
    duplicates: int = 0
    first_offset: int | None = None
    dropped: tuple[int, ...] = ()

    @property
    def exists(self) -> bool:
        return self.seq_nr is not None

    @classmethod
    def of_head(cls, head: JournalHead | None) -> HeadInfo:
        if head is None:
            return cls()
        return cls(seq_nr=head.seq_nr, delete_to=head.delete_to, hide_to=head.delete_to or 0)

    def apply(self, record: ActionRecord) -> HeadInfo:
        action = record.action
        first_offset = record.offset if self.first_offset is None else self.first_offset
        if isinstance(action, Append):
            # Built whole rather than through dataclasses.replace (a fold applies every record
            # of a topic; two replace calls were most of the time an append took here).
            header = action.header
            if not takes(self.seq_nr, header.range.from_, header.expect):
                return HeadInfo(
                    seq_nr=self.seq_nr,
                    delete_to=self.delete_to,
                    hide_to=self.hide_to,
                    purged_at=self.purged_at,
                    appends=self.appends + 1,
                    actions=self.actions + 1,
                    duplicates=self.duplicates + 1,
                    first_offset=first_offset,
                    dropped=(*self.dropped, record.offset),
                )
            seq_nr, delete_to = appended(
                self.seq_nr, self.delete_to, header.range.from_, header.range.to
            )
            return HeadInfo(
                seq_nr=seq_nr,
                delete_to=delete_to,
                hide_to=max(self.hide_to, delete_to or 0),
                purged_at=self.purged_at,
                appends=self.appends + 1,
                actions=self.actions + 1,
                duplicates=self.duplicates,
                first_offset=first_offset,
                dropped=self.dropped,
            )
        counted = replace(self, actions=self.actions + 1, first_offset=first_offset)
        if isinstance(action, Delete):
            return counted._delete(action.header.to)
        if isinstance(action, Purge):
            return counted._purge(record.offset)
        assert isinstance(action, Mark)
        return counted

    def _delete(self, to: SeqNr) -> HeadInfo:
        if self.seq_nr is None:
            return self  # the replicator ignores a delete of a journal it has no head for
        seq_nr, delete_to = deleted(self.seq_nr, self.delete_to, to)
        return replace(
            self, seq_nr=seq_nr, delete_to=delete_to, hide_to=max(self.hide_to, delete_to)
        )

    def _purge(self, offset: int) -> HeadInfo:
        if self.seq_nr is None:
            return self  # the replicator ignores a purge of a journal it has no head for
        return replace(self, seq_nr=None, delete_to=None, hide_to=0, purged_at=offset)


def appended(
    seq_nr: SeqNr | None, delete_to: SeqNr | None, first: SeqNr, last: SeqNr
) -> tuple[SeqNr, SeqNr | None]:
    """(seqNr, deleteTo) of a journal after it took an append of `first..last`: a journal that
    did not exist starts with everything below `first` deleted."""
    if seq_nr is None:
        return last, SeqNr(first - 1) if first > 1 else None
    return last, delete_to


def deleted(seq_nr: SeqNr, delete_to: SeqNr | None, to: SeqNr) -> tuple[SeqNr, SeqNr]:
    """(seqNr, deleteTo) of an existing journal after a delete up to `to` (never past its
    seqNr; a deleteTo above the seqNr, which kafka-journal can leave, raises the seqNr)."""
    old = delete_to or 0
    seq_nr = SeqNr(max(seq_nr, old))
    return seq_nr, SeqNr(max(old, min(to, seq_nr)))


def fold_head_info(head: JournalHead | None, tail: Iterable[ActionRecord]) -> HeadInfo:
    """Fold `tail` (this journal's unreplicated actions, in offset order) onto `head`."""
    if head is None:
        return fold_onto(None, None, -1, tail)
    return fold_onto(head.seq_nr, head.delete_to, head.partition_offset.offset, tail)


def fold_onto(
    seq_nr: SeqNr | None, delete_to: SeqNr | None, covered: int, tail: Iterable[ActionRecord]
) -> HeadInfo:
    """Fold `tail` onto a journal at (seq_nr, delete_to) that holds its records up to offset
    `covered` (seq_nr None: no journal)."""
    info = HeadInfo() if seq_nr is None else HeadInfo(seq_nr, delete_to, delete_to or 0)
    # The dropped offsets are gathered apart: `apply` copies the tuple, which over a long tail
    # of dropped appends (a client resending one append) would make the fold quadratic.
    dropped: list[int] = []
    for record in tail:
        if record.offset <= covered:
            continue  # already in the head
        info = info.apply(record)
        if info.dropped:
            dropped.extend(info.dropped)
            info = replace(info, dropped=())
    return replace(info, dropped=tuple(dropped)) if dropped else info
