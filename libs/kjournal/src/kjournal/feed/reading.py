"""Reading a topic as one feed: each selected partition in offset order, from a cursor or from
its start or end, up to the end offsets as of the request (a catch-up, `entries`) or for as
long as the follower reads (a live tail, `follow`).

`TopicFeed.plan` checks the request against the topic before anything is streamed (so bad
cursors, partitions and positions past retention are problems, not broken streams); `entries`
then reads the partitions one after another; `follow` reads them all at once, interleaved as
their records arrive. Records of journals outside the id prefix are
skipped by their key bytes; an append is judged (feed/judge.py) from its header, and only a taken
one has its payload decoded (needed for its events, and for the tag filter: tags live in the
payload). Memory: at most `states` journal states (feed/states.py): one partition's at a time
in a catch-up, a share of them per partition in a live tail; and the records of one poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import partial

from kjournal.errors import FoldUnavailable
from kjournal.errors import FormatError
from kjournal.errors import InvalidCursor
from kjournal.errors import InvalidInput
from kjournal.errors import PositionGone
from kjournal.feed.cursor import Cursor
from kjournal.feed.cursor import CursorFrame
from kjournal.feed.cursor import Position
from kjournal.feed.entries import AppendEvents
from kjournal.feed.entries import AppendLines
from kjournal.feed.entries import Control
from kjournal.feed.entries import DeliveredEvents
from kjournal.feed.entries import FeedControl
from kjournal.feed.entries import FeedEnd
from kjournal.feed.entries import FeedEntry
from kjournal.feed.entries import FeedHeartbeat
from kjournal.feed.entries import RecordEntries
from kjournal.feed.judge import Verdict
from kjournal.feed.judge import judge
from kjournal.feed.plain_json import plain_json_lines
from kjournal.feed.source import TopicSource
from kjournal.feed.states import DEFAULT_CAPACITY
from kjournal.feed.states import JournalState
from kjournal.feed.states import JournalStates
from kjournal.feed.states import StateResolver
from kjournal.model import Append
from kjournal.model import Key
from kjournal.model import Mark
from kjournal.model import PartitionOffset
from kjournal.read import JournalReader
from kjournal.read import event_records
from kjournal.read.fates import Fate
from kjournal.read.fates import FateKind
from kjournal.read.fates import Lookup
from kjournal.wire.record import ConsumedRecord
from kjournal.wire.record import decode_action_record

__all__ = ["FeedPlan", "FeedRequest", "TopicFeed"]

# State lookups at once per live tail: each is Cassandra reads (pointer2, the head, the
# quarantine flag) and the tail, from the tail cache or else from a Kafka scan, which holds a
# pooled consumer: at most SCAN_CONCURRENCY of those per tail, so that one stream never takes
# the pool from the reader's journal reads.
RESOLVE_CONCURRENCY = 32
SCAN_CONCURRENCY = 4


@dataclass(frozen=True, slots=True)
class FeedRequest:
    """What to read. `after` resumes the partitions it names; the other selected partitions
    start at their beginning (`from_end`: at their end). `partitions` None: all of them.
    `tags`: only events with one of these tags (control entries always). `id_prefix`: only
    journals whose id starts with it."""

    topic: str
    after: Cursor | None = None
    from_end: bool = False
    partitions: Sequence[int] | None = None
    tags: frozenset[str] = frozenset()
    id_prefix: str = ""


@dataclass(frozen=True, slots=True)
class FeedPlan:
    request: FeedRequest
    starts: dict[int, Position] = field(default_factory=dict)
    ends: dict[int, int] = field(default_factory=dict)
    beginnings: dict[int, int] = field(default_factory=dict)


class TopicFeed:
    def __init__(
        self,
        source: TopicSource,
        reader: JournalReader,
        states: int = DEFAULT_CAPACITY,
    ) -> None:
        self._source = source
        self._resolver = StateResolver(reader)
        self._follower = reader.follower
        self._capacity = states

    async def plan(self, request: FeedRequest) -> FeedPlan:
        """Where each selected partition starts and ends. UnknownTopic, InvalidInput (a partition
        the topic does not have), InvalidCursor (a cursor naming one, or an offset past a
        partition's end), PositionGone (a cursor before a partition's beginning)."""
        topic = request.topic
        count = await self._source.partition_count(topic)
        selected = sorted(set(range(count) if request.partitions is None else request.partitions))
        missing = [p for p in selected if not 0 <= p < count]
        if missing:
            raise InvalidInput(f"topic {topic} has partitions 0 to {count - 1}, not {missing}")
        after = request.after.positions if request.after is not None else {}
        if any(not 0 <= p < count for p in after):
            raise InvalidCursor(f"the cursor names partitions topic {topic} does not have")
        offsets = await self._source.offsets(topic, selected)
        plan = FeedPlan(request)
        for partition in selected:
            beginning, end = offsets[partition]
            position = after.get(partition)
            if position is None:
                position = Position(end if request.from_end else beginning)
            elif position.offset < beginning:
                raise PositionGone(topic, partition, position.offset, beginning)
            elif position.offset > end or (position.offset == end and position.skip):
                raise InvalidCursor(
                    f"the cursor names offset {position.offset} of partition {partition}, past "
                    f"its end ({end}): it is not a cursor of this topic"
                )
            plan.starts[partition] = position
            plan.ends[partition] = end
            plan.beginnings[partition] = beginning
        return plan

    async def entries(self, plan: FeedPlan) -> AsyncIterator[FeedEntry]:
        """The plan's entries, partition after partition, then a FeedEnd."""
        async for entries in self.record_entries(plan, as_lines=False):
            for entry in _each(entries):
                yield entry

    async def record_entries(
        self, plan: FeedPlan, *, as_lines: bool = True
    ) -> AsyncIterator[RecordEntries]:
        """`entries`, a record's at a time (records without any are left out), then [FeedEnd]:
        one step of the stream per record rather than per event, and an append's events as
        AppendEvents, or with `as_lines` as AppendLines where its container is plain JSON (an
        encoder writes their lines without an object per event)."""
        request = plan.request
        positions = dict(plan.starts)
        await self._followed(request.topic)
        for partition, start in plan.starts.items():
            states = JournalStates(self._capacity)
            records = self._source.records(
                request.topic,
                partition,
                start.offset,
                plan.ends[partition],
                _accept(request.id_prefix),
            )
            async for raw in records:
                entries = await self._next(plan, raw, states, positions, as_lines=as_lines)
                if entries:
                    yield entries
            positions[partition] = Position(plan.ends[partition])
        yield [FeedEnd(Cursor(dict(positions)))]

    async def follow(self, plan: FeedPlan, heartbeat_s: float) -> AsyncIterator[FeedEntry]:
        """The plan's entries from its starts on, all partitions at once, without end: first a
        FeedHeartbeat with the start cursor, then one whenever `heartbeat_s` passed without an
        entry."""
        positions = dict(plan.starts)
        await self._followed(plan.request.topic)
        yield FeedHeartbeat(Cursor(dict(positions)))
        # All partitions at once share the subscriber's budget of states.
        capacity = max(1, self._capacity // max(1, len(plan.starts)))
        states = {partition: JournalStates(capacity) for partition in plan.starts}
        starts = {partition: position.offset for partition, position in plan.starts.items()}
        batches = self._source.follow(
            plan.request.topic, starts, _accept(plan.request.id_prefix), heartbeat_s
        )
        quiet_since = time.monotonic()
        async for batch in batches:
            resolved = await self._resolve_new(plan, batch, states)
            for raw in batch:
                journals = states[raw.partition]
                for entry in _each(await self._next(plan, raw, journals, positions, resolved)):
                    quiet_since = time.monotonic()
                    yield entry
            if time.monotonic() - quiet_since >= heartbeat_s:
                quiet_since = time.monotonic()
                yield FeedHeartbeat(Cursor(dict(positions)))

    async def _followed(self, topic: str) -> None:
        """Has the reader's fold follow the topic from now on, waiting a little for it to be
        ready: the feed then reads what the fold decides, the fates every journal read returns,
        instead of judging each record from journal states it looks up itself."""
        if self._follower is not None:
            with contextlib.suppress(FoldUnavailable, TimeoutError):
                async with asyncio.timeout(self._follower.wait_timeout_s):
                    await self._follower.topic(topic)

    async def _resolve_new(
        self, plan: FeedPlan, batch: list[ConsumedRecord], states: dict[int, JournalStates]
    ) -> dict[tuple[int, str], JournalState]:
        """The states of the batch's journals that no partition's states hold yet, looked up
        at once (RESOLVE_CONCURRENCY at a time, SCAN_CONCURRENCY of them scanning Kafka) rather
        than one after the other as their first records come up: a live tail meeting a hundred
        journals would otherwise wait out a hundred lookups in a row. Each is the state
        `_record` would look up for the journal's first record in the batch; a journal not met
        before it has the same state at the partition's start as right before that record."""
        firsts: dict[tuple[int, str], int] = {}
        folds = self._follower.following(plan.request.topic) if self._follower else None
        for raw in batch:
            try:
                id_ = (raw.key or b"").decode("utf-8")
            except UnicodeDecodeError:
                continue  # _record quarantines it; nothing to look up
            journal = (raw.partition, id_)
            if not id_ or journal in firsts or id_ in states[raw.partition]:
                continue
            if folds is not None and _fold_decides(folds.decided(raw.partition, raw.offset)):
                continue  # the reader's fold decides it (or is about to): no state needed
            firsts[journal] = raw.offset
        if len(firsts) < 2:
            return {}  # one lookup gains nothing from being made early
        limit = asyncio.Semaphore(RESOLVE_CONCURRENCY)
        scans = asyncio.Semaphore(SCAN_CONCURRENCY)
        topic = plan.request.topic

        async def resolve(journal: tuple[int, str], offset: int) -> JournalState:
            partition, id_ = journal
            at = offset if states[partition].evicted else plan.starts[partition].offset
            async with limit:
                return await self._resolver.state_at(
                    Key(topic, id_), partition, at, plan.beginnings[partition], scans
                )

        found = await asyncio.gather(*(resolve(j, offset) for j, offset in firsts.items()))
        return dict(zip(firsts, found, strict=True))

    async def _next(
        self,
        plan: FeedPlan,
        raw: ConsumedRecord,
        states: JournalStates,
        positions: dict[int, Position],
        resolved: dict[tuple[int, str], JournalState] | None = None,
        *,
        as_lines: bool = False,
    ) -> RecordEntries:
        """The entries of the next record of its partition; the partition's position after it.
        `resolved`: states looked up ahead (`_resolve_new`), each taken once. `as_lines`: an
        append in a plain JSON container as AppendLines (a catch-up writes lines, not entries)."""
        partition = raw.partition
        expected = positions[partition].offset
        if raw.offset > expected and not plan.request.id_prefix:
            # Offsets past one the feed expected: Kafka may have dropped it (retention passed a
            # slow follower, and the consumer moved to the log start). With an id prefix, other
            # journals' records are skipped unseen: there a jump is the rule, and not checked.
            await self._check_held(plan.request.topic, partition, expected)
        start = plan.starts[partition]
        skip = start.skip if raw.offset == start.offset else 0
        ahead = None
        if resolved:
            id_ = (raw.key or b"").decode("utf-8", "replace")
            found = resolved.pop((partition, id_), None)  # at the journal's first record only
            ahead = None if found is None else (id_, found)
        fate = await self._fate(plan.request.topic, partition, raw.offset)
        if fate is not None:
            entries = self._decided(plan, partition, raw, skip, states, positions, fate, as_lines)
        else:
            entries = await self._record(
                plan, partition, raw, skip, states, positions, ahead, as_lines
            )
        positions[partition] = Position(raw.offset + 1)
        return entries

    async def _fate(self, topic: str, partition: int, offset: int) -> Fate | Lookup | None:
        """The fate the reader's fold decided for the record, waiting a little for it when the
        fold is behind; None when the fold cannot tell (then the feed judges the record itself)."""
        follower = self._follower
        folds = follower.following(topic) if follower is not None else None
        if folds is None:
            return None
        found = folds.decided(partition, offset)
        if found is Lookup.AHEAD:
            assert follower is not None
            try:
                async with asyncio.timeout(follower.wait_timeout_s):
                    found = await follower.fate_at(topic, partition, offset)
            except (FoldUnavailable, TimeoutError):
                return None
        if found in (None, Lookup.GONE, Lookup.PENDING, Lookup.AHEAD):
            return None
        if isinstance(found, Fate) and found.kind is FateKind.UNKNOWN:
            return None
        return found

    def _decided(
        self,
        plan: FeedPlan,
        partition: int,
        raw: ConsumedRecord,
        skip: int,
        states: JournalStates,
        positions: dict[int, Position],
        fate: Fate | Lookup,
        as_lines: bool = False,
    ) -> RecordEntries:
        """The entries of one record whose fate the reader's fold decided (no lookup, no
        judging: every journal reader returns what the fold decided)."""
        if not isinstance(fate, Fate):
            return []  # no journal record there (a mark, or a record readers skip)
        offset = raw.offset
        states.discard(fate.id)  # judged by the fold: a state kept here would be stale
        kind = fate.kind
        control = _CONTROLS.get(kind)
        if control is None and kind is not FateKind.TAKEN:
            return []  # dropped, or a delete or purge of no journal
        if skip and control is not None:
            return []
        frame = CursorFrame(positions, partition)
        if kind is FateKind.PARKED:
            if fate.quarantined_at is None or fate.quarantined_at == offset:
                reason = fate.reason or "its record does not decode"
            else:
                reason = f"parked behind the quarantined record at offset {fate.quarantined_at}"
            states.put(fate.id, JournalState(quarantined_at=fate.quarantined_at or offset))
            after = frame.cursor(Position(offset + 1))
            return [
                FeedControl(
                    Control.QUARANTINED, fate.id, partition, offset, None, after, reason=reason
                )
            ]
        if control is not None:
            after = frame.cursor(Position(offset + 1))
            to = fate.seq_nr if kind is FateKind.DELETE else None
            return [FeedControl(control, fate.id, partition, offset, fate.timestamp, after, to=to)]
        record = decode_action_record(raw)  # the fold decoded it: it decodes
        assert record is not None
        append = record.action
        assert isinstance(append, Append)
        return _delivered(
            fate.id, append, partition, offset, skip, plan.request.tags, frame, as_lines
        )

    async def _check_held(self, topic: str, partition: int, offset: int) -> None:
        """PositionGone if Kafka no longer holds `offset` (offsets also skip for records the
        feed never sees: transaction markers, records without a key)."""
        beginning, _ = (await self._source.offsets(topic, [partition]))[partition]
        if beginning > offset:
            raise PositionGone(topic, partition, offset, beginning)

    async def _record(
        self,
        plan: FeedPlan,
        partition: int,
        raw: ConsumedRecord,
        skip: int,
        states: JournalStates,
        positions: dict[int, Position],
        ahead: tuple[str, JournalState] | None = None,
        as_lines: bool = False,
    ) -> RecordEntries:
        """The entries of one record from its `skip`th on, each with the cursor right after it.
        `ahead`: the (journal id, state) looked up ahead for this record, if any."""
        offset = raw.offset

        frame: CursorFrame | None = None

        def cursor(position: Position) -> Cursor:
            nonlocal frame
            if frame is None:
                frame = CursorFrame(positions, partition)
            return frame.cursor(position)

        def quarantined(id_: str, reason: str) -> list[FeedControl]:
            states.put(id_, JournalState(quarantined_at=offset))
            if skip:
                return []
            after = cursor(Position(offset + 1))
            return [
                FeedControl(Control.QUARANTINED, id_, partition, offset, None, after, reason=reason)
            ]

        try:
            record = decode_action_record(raw)
        except FormatError as exc:
            return quarantined((raw.key or b"").decode("utf-8", "replace"), str(exc))
        if record is None:
            return []  # not a journal record this version knows: readers skip it too
        action = record.action
        id_ = action.key.id
        state = states.get(id_)
        if state is None and ahead is not None and ahead[0] == id_:
            state = ahead[1]  # looked up ahead for this record (_resolve_new)
        if state is None:
            at = offset if states.evicted else plan.starts[partition].offset
            state = await self._resolver.state_at(
                Key(plan.request.topic, id_), partition, at, plan.beginnings[partition]
            )
        judged = judge(state, record)
        states.put(id_, judged.state)
        if judged.verdict is Verdict.PARKED:
            if isinstance(action, Mark):
                return []
            parked_at = state.quarantined_at
            return quarantined(id_, f"parked behind the quarantined record at offset {parked_at}")
        if judged.verdict is Verdict.CONTROL:
            assert judged.control is not None
            if skip:
                return []
            after = cursor(Position(offset + 1))
            return [
                FeedControl(
                    judged.control, id_, partition, offset, action.timestamp, after, to=judged.to
                )
            ]
        if judged.verdict is not Verdict.TAKEN:
            return []
        assert isinstance(action, Append)
        event_frame = CursorFrame(positions, partition) if frame is None else frame
        try:
            return _delivered(
                id_, action, partition, offset, skip, plan.request.tags, event_frame, as_lines
            )
        except FormatError as exc:
            return quarantined(id_, str(exc))


def _each(entries: RecordEntries) -> Sequence[FeedEntry]:
    return entries.entries() if isinstance(entries, AppendEvents | AppendLines) else entries


def _delivered(
    id_: str,
    append: Append,
    partition: int,
    offset: int,
    skip: int,
    tags: frozenset[str],
    frame: CursorFrame,
    as_lines: bool,
) -> DeliveredEvents:
    """The append's events from its `skip`th on that carry one of `tags` (any, if none); with
    `as_lines`, read from a plain JSON container where it is one (feed/plain_json.py).
    FormatError if the append does not decode."""
    plain = plain_json_lines(append, PartitionOffset(partition, offset)) if as_lines else None
    if plain is not None:
        shared, own = plain
        indexes = tuple(
            index
            for index, event in enumerate(own)
            if index >= skip and (not tags or not tags.isdisjoint(event["tags"]))
        )
        return AppendLines(
            id_,
            shared,
            own,
            indexes,
            frame,
            offset,
            partial(event_records, append, partition, offset),
        )
    events = event_records(append, partition, offset)
    indexes = tuple(
        index
        for index, event in enumerate(events)
        if index >= skip and (not tags or event.event.tags & tags)
    )
    return AppendEvents(id_, events, indexes, frame, offset)


def _fold_decides(found: Fate | Lookup | None) -> bool:
    """Whether the reader's fold has decided a record, or will (it is ahead of the fold, or
    waits for its journal's start), rather than leave it to the feed."""
    if isinstance(found, Fate):
        return found.kind is not FateKind.UNKNOWN
    return found in (Lookup.AHEAD, Lookup.PENDING, Lookup.NO_RECORD)


_CONTROLS = {
    FateKind.DELETE: Control.DELETE,
    FateKind.PURGE: Control.PURGE,
    FateKind.PARKED: Control.QUARANTINED,
}


def _accept(prefix: str) -> Callable[[bytes | None], bool]:
    wanted = prefix.encode()
    return lambda key: key is not None and key.startswith(wanted)
