"""Replication folding: one journal's actions of a slice → the fewest batches with the same effect.

The actions are walked newest → oldest (kafka-journal's `Batch.of`; docs/replication.md §2); `batches[0]`
is always the oldest batch built so far, i.e. the one that *follows* the action being folded:

* `Mark` → ignored.
* `Purge` → dropped if followed by a purge, else a new purge batch; anything older than a purge
  is dropped.
* `Delete(to)` → dropped if followed by a purge. Followed by appends: dropped if a later delete
  already covers `to`, else a new delete batch. Followed by a delete: dropped if smaller, else it
  takes that delete's place (keeping the newer offset, see `Delete.offset`).
* `Append` → dropped if followed by a purge. Followed by appends: merged into them unless a later
  delete covers its whole range (then dropped). Followed by a delete or nothing: a new batch.

Beyond kafka-journal, batches remember what dropped appends imply for the store:
`Appends.dropped_from` and `PurgeBatch.dropped`.

The result runs oldest → newest and is applied in that order.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import TypeAlias

from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import Mark
from kjournal.model import PartitionOffset
from kjournal.model import Purge
from kjournal.model import SeqNr
from kjournal.model import SeqRange


@dataclass(frozen=True, slots=True)
class AppendRecord:
    """An `Append` action and where it sits in Kafka."""

    action: Append
    partition_offset: PartitionOffset

    @property
    def offset(self) -> int:
        return self.partition_offset.offset


@dataclass(frozen=True, slots=True)
class Appends:
    """Consecutive appends written as one batch; `offset` is the newest append's offset.

    `dropped_from`: the lowest seqNr of the appends just before this batch that a later delete
    made unnecessary. A journal created by this batch starts after them, not after `records`.
    """

    offset: int
    records: tuple[AppendRecord, ...]  # oldest first
    dropped_from: SeqNr | None = None


@dataclass(frozen=True, slots=True)
class DeleteBatch:
    """Delete up to `to`.

    `offset` is the newest offset among the deletes folded into this one. kafka-journal keeps the
    offset of the delete whose `to` wins, which can be the older one; the newer offset makes the
    head's watermark cover every action the batch stands for, so a replay never re-applies the
    dropped newer delete on its own.
    """

    offset: int
    to: SeqNr
    origin: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class PurgeBatch:
    """Erase the journal.

    `dropped`: the seqNr ranges of the appends this purge made unnecessary (sorted, adjacent
    ones merged). If an earlier, crashed attempt already wrote their rows (rows go in before the
    head), the purge deletes their segments too, so no orphan row can resurface in the journal's
    next incarnation. Ranges, not one span: appends of incarnations between purges may lie far
    apart (a journal may start at any seqNr), and the segments between them hold nothing.
    """

    offset: int
    origin: str | None = None
    version: str | None = None
    dropped: tuple[SeqRange, ...] = ()

    def dropping(self, seq_nrs: SeqRange) -> PurgeBatch:
        """This purge, also making unnecessary the append of `seq_nrs`."""
        merged: list[SeqRange] = []
        for current in sorted((*self.dropped, seq_nrs), key=lambda r: r.from_):
            if merged and current.from_ <= merged[-1].to + 1:
                last = merged[-1]
                merged[-1] = SeqRange(last.from_, SeqNr(max(last.to, current.to)))
            else:
                merged.append(current)
        return replace(self, dropped=tuple(merged))


Batch: TypeAlias = Appends | DeleteBatch | PurgeBatch


@dataclass(slots=True)
class _OpenAppends:
    """An `Appends` while folding: records newest first, so merging one is an O(1) append (a
    frozen batch rebuilt per merged append made a journal's k appends cost O(k²))."""

    offset: int
    newest_first: list[AppendRecord]
    dropped_from: SeqNr | None = None

    def close(self) -> Appends:
        return Appends(self.offset, tuple(reversed(self.newest_first)), self.dropped_from)


def fold_batches(records: Iterable[ActionRecord]) -> list[Batch]:
    """Fold one journal's action records (in offset order) into batches, oldest first."""
    ordered: Sequence[ActionRecord] = records if isinstance(records, Sequence) else list(records)
    batches: list[Batch | _OpenAppends] = []  # newest first while folding; reversed at the end
    latest_delete: DeleteBatch | None = None  # the oldest delete batch built so far

    for record in reversed(ordered):
        action = record.action
        offset = record.offset
        following = batches[-1] if batches else None

        if isinstance(action, Mark):
            continue

        if isinstance(action, Purge):
            if isinstance(following, PurgeBatch):
                continue
            batches.append(PurgeBatch(offset, action.header.origin, action.header.version))

        elif isinstance(action, Delete):
            to = action.header.to
            if isinstance(following, PurgeBatch):
                continue
            if isinstance(following, DeleteBatch):
                if to < following.to:
                    continue
                replacement = DeleteBatch(
                    following.offset, to, action.header.origin, action.header.version
                )
                batches[-1] = replacement
                latest_delete = replacement
                continue
            if latest_delete is not None and latest_delete.to >= to:
                continue
            latest_delete = DeleteBatch(offset, to, action.header.origin, action.header.version)
            batches.append(latest_delete)

        elif isinstance(action, Append):
            append = AppendRecord(action, record.partition_offset)
            if isinstance(following, PurgeBatch):
                batches[-1] = following.dropping(action.header.range)
                continue
            if isinstance(following, _OpenAppends):
                if latest_delete is not None and latest_delete.to >= action.header.range.to:
                    first = action.header.range.from_
                    if following.dropped_from is not None:
                        first = min(first, following.dropped_from)
                    following.dropped_from = first
                    continue
                following.newest_first.append(append)
                continue
            batches.append(_OpenAppends(offset, [append]))

    batches.reverse()
    return [batch.close() if isinstance(batch, _OpenAppends) else batch for batch in batches]
