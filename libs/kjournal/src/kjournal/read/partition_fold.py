"""The fold of one Kafka partition: every record's fate decided once, as it is consumed.

Pure and synchronous: the follower (read/follower.py) feeds it records in offset order and does
the I/O it asks for (bootstrapping journals, pointer2). What "the fold has passed offset o"
guarantees, and how it survives restarts, purges, quarantine and replication being offline, is
in docs/concurrency.md ("The fold").

Per partition it keeps:

* each journal it knows (`JournalEntry`): base (Cassandra's head as of the last trimmed record),
  tail (the records since, payloads within a shared byte budget) and state; at most
  `max_journals`, least recently used evicted first;
* journals it met but cannot decide yet (`pending`): their records wait while the follower
  bootstraps them from Cassandra (read/bootstrap.py), then are decided in order; a journal the
  topic's `KnownJournals` (read/known.py) says cannot exist starts empty at once instead;
* the fates of the last `max_fates` journal records (read/fates.py).

A journal's records are decided by the append rule (fold/append_rule.py), exactly as the
replicator applies them (replicate/), including where it quarantines: a record whose header or
payload does not decode quarantines its journal, whose later records are parked.
"""

from __future__ import annotations

from collections import OrderedDict
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from kjournal.fold.append_rule import dropped_kind
from kjournal.fold.append_rule import takes
from kjournal.fold.head_info import HeadInfo
from kjournal.fold.head_info import appended
from kjournal.fold.head_info import deleted
from kjournal.fold.head_info import fold_onto
from kjournal.lru import used
from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Delete
from kjournal.model import Mark
from kjournal.model import Purge
from kjournal.read.bootstrap import Start
from kjournal.read.fates import DROPPED_KINDS
from kjournal.read.fates import Fate
from kjournal.read.fates import FateKind
from kjournal.read.fates import Lookup
from kjournal.read.journal_entry import Base
from kjournal.read.journal_entry import JournalEntry
from kjournal.read.known import KnownJournals
from kjournal.read.records import Poison
from kjournal.read.records import decoded
from kjournal.read.tail import Tail
from kjournal.wire.record import ConsumedRecord

__all__ = ["Overlap", "PartitionFold", "PayloadBudget", "Pending"]


class PayloadBudget:
    """Bytes of append payloads the folds of a process may hold, shared by all partitions."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, size: int) -> bool:
        if self.used + size > self.limit:
            return False
        self.used += size
        return True

    def give_back(self, size: int) -> None:
        self.used -= size


@dataclass(slots=True)
class Pending:
    """A journal met but not known yet: its records from offset `since` on wait for its start."""

    since: int
    records: list[ActionRecord | Poison] = field(default_factory=list)
    payload_bytes: int = 0
    # Met for the first time by this fold (its KnownJournals had never seen it): with `whole`,
    # it has no record in the partition below `since`.
    first_meet: bool = False


@dataclass(frozen=True, slots=True)
class Overlap:
    """A dropped append over seqNrs its journal held, kept so that its events can be compared
    with the journal's off the fold's path (the follower starts the comparison as soon as the
    fold meets it): the fold only notes where the journal's tail stood, so that a client resending
    one append thousands of times costs the fold one step per resend.

    What the append met is the entry's base and the first `tail_count` records of its tail,
    ending with `last_before`; `before` gives them while the entry still holds them."""

    fate: Fate
    record: ActionRecord  # the append, payload included
    base: Base
    entry: JournalEntry  # for the head's metadata, read if Cassandra's rows are needed
    tail_count: int
    last_before: ActionRecord | None
    entry_fold: PartitionFold  # the fold that keeps it until compared

    def before(self) -> tuple[Tail, HeadInfo] | None:
        """The journal's tail before the append and the journal as the append met it; None
        once the entry no longer holds them (replicated and trimmed, or started anew)."""
        entry, count = self.entry, self.tail_count
        tail = entry.tail
        if entry.base is not self.base or len(tail) < count:
            return None
        if count and tail[count - 1] is not self.last_before:
            return None
        before = _with_payloads_from(
            Tail(self.base.offset + 1, self.record.offset, tuple(tail[:count])),
            entry.payloads_from,
        )
        return before, PartitionFold.head_info(self.base, before)


_NO_TIMESTAMP = datetime.min


class PartitionFold:
    """See the module docstring. `start`: the first offset it consumes (pointer2 + 1)."""

    def __init__(
        self,
        topic: str,
        partition: int,
        start: int,
        budget: PayloadBudget,
        *,
        max_journals: int = 20_000,
        max_fates: int = 20_000,
        max_pending_records: int = 100_000,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.start = start
        self.position = start - 1  # the last offset consumed
        self.replicated = start - 1  # pointer2 as last read
        # The topic's journals with quarantine rows, read after pointer2 was `quarantine_checked`
        # (the replicator writes those rows before it moves pointer2): complete up to it.
        self.quarantined_ids: frozenset[str] = frozenset()
        self.quarantine_checked = start - 1
        self.lost_up_to = -1  # journals evicted with records Cassandra may lack sat at or below
        # The topic's journals that may exist (set by the follower once they are being listed):
        # one absent from them starts empty, without its head read from Cassandra.
        self.known: KnownJournals | None = None
        self.started_new = 0  # journals started that way
        # Whether the fold consumed the partition from its first record ever (offset 0, nothing
        # replicated before): then a journal it never met has no record here before it met it.
        self.whole = start == 0
        self.fates_from = start  # fates of offsets below this are not kept
        self.journals: OrderedDict[str, JournalEntry] = OrderedDict()
        self.pending: dict[str, Pending] = {}
        self.fates: OrderedDict[int, Fate] = OrderedDict()
        self._awaiting: dict[int, str] = {}  # offset → pending journal's id
        self._order: deque[tuple[int, str]] = deque()  # tail records, for trimming
        self._budget = budget
        self._max_journals = max_journals
        self._max_fates = max_fates
        self._max_pending_records = max_pending_records
        self._pending_records = 0  # records waiting in `pending`
        # drained by the follower after each batch
        self.decided: list[Fate] = []
        self.new_pending: list[str] = []
        self._overlaps: dict[int, Overlap] = {}  # offset → an OVERLAP fate's, until compared
        self.overlaps: list[Overlap] = []  # met since the follower last drained them

    # Consuming

    def consume(self, raw: ConsumedRecord) -> None:
        """Fold the next record of the partition (offsets ascending)."""
        offset = raw.offset
        if self.position < 0 and offset != 0:
            self.whole = False  # the log begins later (retention): records were never seen
        self.position = offset
        if not raw.key:
            return  # not a journal record
        item = decoded(raw)
        if item is None:
            return  # a record this version does not know: readers and the replicator skip it
        if isinstance(item, Poison):
            self._poison(raw.key.decode("utf-8", "replace"), item)
            return
        id_ = item.action.key.id
        entry = self.entry(id_)
        if entry is not None:
            self._fold(entry, item)
            return
        pending = self.pending.get(id_)
        if pending is None:
            entry = self._start_new(id_, offset)
            if entry is not None:
                self._fold(entry, item)
                self._evict()
                return
            pending = self._meet(id_, offset)
        self._buffer(pending, item)
        self._awaiting[offset] = id_
        self._waiting_one_more()

    def passed(self, position: int) -> None:
        """The consumer is at `position + 1` (records without a key and transaction markers
        move it too)."""
        if self.position < 0 <= position:
            self.whole = False  # moved without a record: whether from offset 0 is not known
        self.position = max(self.position, position)

    def _meet(self, id_: str, since: int) -> Pending:
        first_meet = False
        if self.known is not None:
            first_meet = not self.known.may_exist(id_)
            self.known.add(id_)
        pending = self.pending[id_] = Pending(since, first_meet=first_meet)
        self.new_pending.append(id_)
        return pending

    def _start_new(self, id_: str, since: int) -> JournalEntry | None:
        """Know a journal met at `since` as empty before it, if the topic's `KnownJournals` says
        it has no head and no record below `since` the fold met (and it has no quarantine row);
        None where it may have a past, which only Cassandra can tell."""
        known = self.known
        if (
            known is None
            or not known.absent(id_, self.partition, since)
            or id_ in self.quarantined_ids
        ):
            return None
        known.add(id_)
        self.started_new += 1
        entry = self.journals[id_] = JournalEntry.of_base(id_, Base(), since)
        return entry

    def want(self, id_: str) -> bool:
        """Start knowing a journal a read asks about; False if it is known or pending already
        (or known at once: `_start_new`)."""
        if id_ in self.journals or id_ in self.pending:
            return False
        if self._start_new(id_, self.position + 1) is not None:
            self._evict()
            return False
        self._meet(id_, self.position + 1)
        return True

    def _buffer(self, pending: Pending, record: ActionRecord) -> None:
        action = record.action
        if isinstance(action, Append) and action.payload:
            if self._budget.take(len(action.payload)):
                pending.payload_bytes += len(action.payload)
            else:
                record = _without_payload(record)
        pending.records.append(record)

    def _waiting_one_more(self) -> None:
        """Count a record buffered for a start; past the bound (starts failing for long: Cassandra
        down), the journal waiting longest is given up: its records are read again from Kafka
        when it is started."""
        self._pending_records += 1
        if self._pending_records > self._max_pending_records and self.pending:
            self.drop_pending(next(iter(self.pending)))

    def _poison(self, id_: str, poison: Poison) -> None:
        entry = self.entry(id_)
        if entry is not None:
            self._quarantine(entry, poison)
            return
        pending = self.pending.get(id_) or self._meet(id_, poison.offset)
        pending.records.append(poison)
        self._awaiting[poison.offset] = id_
        self._waiting_one_more()

    # Deciding

    def _fold(self, entry: JournalEntry, record: ActionRecord) -> None:
        """Decide `record`, the next record of the known journal `entry`."""
        offset = record.offset
        action = record.action
        entry.last_offset = offset
        if entry.quarantined_at is not None and offset >= entry.quarantined_at:
            if not isinstance(action, Mark):
                self._decide(
                    Fate(
                        entry.id,
                        offset,
                        FateKind.PARKED,
                        action.timestamp,
                        quarantined_at=entry.quarantined_at,
                    )
                )
            return
        if isinstance(action, Append):
            self._fold_append(entry, record, action)
        elif isinstance(action, Delete):
            if entry.seq_nr is None:
                fate = Fate(entry.id, offset, FateKind.NOTHING, action.timestamp)
            else:
                entry.seq_nr, entry.delete_to = deleted(
                    entry.seq_nr, entry.delete_to, action.header.to
                )
                fate = Fate(entry.id, offset, FateKind.DELETE, action.timestamp, entry.delete_to)
            self._keep(entry, record)
            self._decide(fate)
        elif isinstance(action, Purge):
            if entry.seq_nr is None:
                fate = Fate(entry.id, offset, FateKind.NOTHING, action.timestamp)
            else:
                entry.seq_nr, entry.delete_to = None, None
                fate = Fate(entry.id, offset, FateKind.PURGE, action.timestamp)
            self._keep(entry, record)
            self._decide(fate)
        else:
            self._keep(entry, record)  # a mark: no fate, but reads pass it like the scan did

    def _fold_append(self, entry: JournalEntry, record: ActionRecord, append: Append) -> None:
        header = append.header
        first, last = header.range.from_, header.range.to
        met = entry.seq_nr
        if takes(met, first, header.expect):
            entry.seq_nr, entry.delete_to = appended(met, entry.delete_to, first, last)
            self._keep(entry, record)
            self._decide(
                Fate(entry.id, record.offset, FateKind.TAKEN, append.timestamp, last, header.expect)
            )
            return
        if met is not None and last <= met:
            # Over seqNrs the journal holds: a retry is a replay, only comparing tells.
            fate = Fate(
                entry.id, record.offset, FateKind.OVERLAP, append.timestamp, met, header.expect
            )
            tail = entry.tail
            overlap = Overlap(
                fate, record, entry.base, entry, len(tail), tail[-1] if tail else None, self
            )
            self._overlaps[record.offset] = overlap
            self.overlaps.append(overlap)
        else:
            kind = DROPPED_KINDS[dropped_kind(False, header.expect, first, met)]
            fate = Fate(entry.id, record.offset, kind, append.timestamp, met or 0, header.expect)
        self._keep(entry, _without_payload(record), dropped=True)
        self._decide(fate)

    def _quarantine(self, entry: JournalEntry, poison: Poison) -> None:
        entry.last_offset = poison.offset
        if entry.quarantined_at is None:
            entry.quarantined_at = poison.offset
            entry.quarantine_reason = poison.reason
        self._decide(
            Fate(
                entry.id,
                poison.offset,
                FateKind.PARKED,
                poison.timestamp or _NO_TIMESTAMP,
                quarantined_at=entry.quarantined_at,
                reason=poison.reason,
            )
        )

    def _keep(self, entry: JournalEntry, record: ActionRecord, dropped: bool = False) -> None:
        """Add `record` to the journal's tail (it is not replicated: offsets above pointer2).
        A taken append's payload is kept while the budget lasts; from the first one that is
        not (or came without it: buffered past the budget), reads take them from Kafka again.
        A dropped append's never is: no read returns its events."""
        action = record.action
        if isinstance(action, Append) and not dropped:
            size = len(action.payload)
            if size and entry.payloads_from is None and self._budget.take(size):
                entry.payload_bytes += size
            else:
                if entry.payloads_from is None:
                    entry.payloads_from = record.offset
                record = _without_payload(record)
        entry.tail.append(record)
        self._order.append((record.offset, entry.id))

    def _decide(self, fate: Fate) -> None:
        self.fates[fate.offset] = fate
        if len(self.fates) > self._max_fates:
            offset, _ = self.fates.popitem(last=False)
            self._overlaps.pop(offset, None)
            self.fates_from = offset + 1
        self.decided.append(fate)

    # Starting a journal

    def begin(self, id_: str) -> tuple[int, tuple[int, int] | None]:
        """Where the pending journal's window begins (B: Cassandra's head, and the quarantined
        journals as last read, hold every record of it below B), and the offsets [start, end) to
        read from Kafka for its records there that the fold did not buffer (None: none can be
        there). Asked before the head is read.

        Below `since` the journal's records are in Cassandra, but for those of journals evicted
        with unreplicated records (at or below `lost_up_to`): past pointer2, they are read."""
        since = self.pending[id_].since
        replicated, lost = min(self.replicated, self.quarantine_checked), self.lost_up_to
        if since > replicated + 1 and lost > replicated:
            return replicated + 1, (replicated + 1, min(lost + 1, since))
        return since, None

    def unmet(self, id_: str) -> bool:
        """Whether the pending journal has no record in the partition below where the fold met
        it: the fold consumed the partition from its first record and never met it before (so
        a head Cassandra holds of it in this partition came from the records the fold has)."""
        return self.whole and self.pending[id_].first_meet

    def window(self, id_: str, end: int) -> list[ActionRecord | Poison]:
        """The pending journal's records buffered at offsets below `end`."""
        return [record for record in self.pending[id_].records if record.offset < end]

    def install(
        self, id_: str, start: Start, earlier: Iterable[ActionRecord | Poison] = ()
    ) -> None:
        """Know the pending journal `id_` from `start` on, deciding its buffered records (and
        `earlier` ones, read from Kafka below what it buffered) in offset order."""
        pending = self.pending.pop(id_)
        self._budget.give_back(pending.payload_bytes)
        self._pending_records -= len(pending.records)
        entry = JournalEntry.of_base(id_, start.base, start.exact_from)
        entry.error = start.error
        if start.quarantined_at is not None:
            entry.quarantined_at = start.quarantined_at
            entry.quarantine_reason = start.reason
        self.journals[id_] = entry
        for item in [*earlier, *pending.records]:
            self._awaiting.pop(item.offset, None)
            if item.offset < start.exact_from:
                self._undecided(id_, item)
            elif isinstance(item, Poison):
                self._quarantine(entry, item)
            else:
                self._fold(entry, item)
        self.trim(entry)
        self._evict()

    def drop_pending(self, id_: str) -> None:
        """Give up a pending journal (its start failed): the fates of its buffered records are
        not the fold's to tell, and a later start of it reads them from Kafka again."""
        pending = self.pending.pop(id_, None)
        if pending is None:
            return
        self._budget.give_back(pending.payload_bytes)
        self._pending_records -= len(pending.records)
        for item in pending.records:
            self._awaiting.pop(item.offset, None)
            self._undecided(id_, item)
            self.lost_up_to = max(self.lost_up_to, item.offset)

    def _undecided(self, id_: str, item: ActionRecord | Poison) -> None:
        """A record of the journal whose fate the fold cannot tell (replicated before the fold
        knew its journal): the outcome's slow path answers for it."""
        if isinstance(item, Poison):
            self._decide(Fate(id_, item.offset, FateKind.UNKNOWN, item.timestamp or _NO_TIMESTAMP))
        elif not isinstance(item.action, Mark):
            self._decide(Fate(id_, item.offset, FateKind.UNKNOWN, item.action.timestamp))

    # Replication and memory

    def quarantines_known(self, ids: frozenset[str], pointer2: int) -> None:
        """The topic's quarantined journals, read after pointer2 was `pointer2`."""
        self.quarantined_ids = ids
        self.quarantine_checked = max(self.quarantine_checked, pointer2)

    def replicated_up_to(self, pointer2: int) -> None:
        """pointer2 moved: Cassandra holds every record up to it, so tails drop them."""
        if pointer2 <= self.replicated:
            return
        self.replicated = pointer2
        order = self._order
        while order and order[0][0] <= pointer2:
            _, id_ = order.popleft()
            entry = self.journals.get(id_)
            if entry is not None:
                self.trim(entry)

    def trim(self, entry: JournalEntry) -> None:
        """Fold the entry's tail records at or below pointer2 into its base."""
        tail = entry.tail
        replicated = self.replicated
        count = 0
        base = entry.base
        for record in tail:
            if record.offset > replicated:
                break
            count += 1
            if entry.quarantined_at is None or record.offset < entry.quarantined_at:
                after = base.apply(record)
                if after.seq_nr is None and base.seq_nr is not None:
                    entry.meta = None  # purged: a new incarnation may be created otherwise
                base = after
            action = record.action
            if isinstance(action, Append) and action.payload:
                entry.payload_bytes -= len(action.payload)
                self._budget.give_back(len(action.payload))
        if count:
            del tail[:count]
            entry.base = base
            if entry.payloads_from is not None and (not tail or entry.payloads_from <= replicated):
                entry.payloads_from = next(
                    (
                        r.offset
                        for r in tail
                        if isinstance(r.action, Append) and not r.action.payload
                    ),
                    None,
                )

    def _evict(self) -> None:
        while len(self.journals) > self._max_journals:
            _, entry = self.journals.popitem(last=False)
            if entry.tail or entry.last_offset > self.replicated:
                self.lost_up_to = max(self.lost_up_to, entry.last_offset)
            self._budget.give_back(entry.payload_bytes)

    def forget(self) -> None:
        """Release every payload held (the fold is dropped)."""
        for entry in self.journals.values():
            self._budget.give_back(entry.payload_bytes)
        for pending in self.pending.values():
            self._budget.give_back(pending.payload_bytes)
        self.journals.clear()
        self.pending.clear()
        self._overlaps.clear()
        self._pending_records = 0

    # Looking up

    def overlap(self, offset: int) -> Overlap | None:
        """The dropped append at `offset` whose fate is OVERLAP, while it is not compared (the
        comparison takes it: `compared`)."""
        return self._overlaps.get(offset)

    def compared(self, offset: int) -> None:
        self._overlaps.pop(offset, None)

    def fate(self, offset: int) -> Fate | Lookup:
        if offset > self.position:
            return Lookup.AHEAD
        fate = self.fates.get(offset)
        if fate is not None:
            return fate
        if offset in self._awaiting:
            return Lookup.PENDING
        if offset < self.fates_from:
            return Lookup.GONE
        return Lookup.NO_RECORD

    def awaiting(self, offset: int) -> str | None:
        """The pending journal whose record sits at `offset`, if any."""
        return self._awaiting.get(offset)

    def entry(self, id_: str) -> JournalEntry | None:
        """The journal's entry, made the most recently used (the last to be evicted)."""
        return used(self.journals, id_)

    def view_tail(self, entry: JournalEntry) -> Tail:
        """The entry's tail as of now (the records after its base)."""
        start = max(entry.base.offset, self.replicated) + 1
        return _with_payloads_from(
            Tail(start, self.position + 1, tuple(entry.tail)), entry.payloads_from
        )

    @staticmethod
    def head_info(base: Base, tail: Tail) -> HeadInfo:
        """The journal's state with the counts a status reports: `tail` folded onto `base`."""
        return fold_onto(base.seq_nr, base.delete_to, base.offset, tail.actions)


def _without_payload(record: ActionRecord) -> ActionRecord:
    action = record.action
    assert isinstance(action, Append)
    if not action.payload:
        return record
    return ActionRecord(
        Append(action.key, action.timestamp, action.header, b"", action.headers),
        record.partition_offset,
    )


def _with_payloads_from(tail: Tail, payloads_from: int | None) -> Tail:
    if payloads_from is None or payloads_from >= tail.end:
        return tail
    return Tail(tail.start, tail.end, tail.actions, payloads_from)
