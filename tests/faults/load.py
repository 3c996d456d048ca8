"""The load of a fault scenario: journals appended to by clients that retry, as real clients do,
and a ledger of every append the writer acknowledged.

Each journal has one writer task (the single-writer principle): it appends its next events and,
when the client gives up (its 30 s retry budget spent), sends the same append again until it is
acknowledged or the scenario's deadline passes. Some tasks also resend an acknowledged append
(a client that timed out after the writer had answered: a replay) or send the next one with the
last acknowledged event in front (dropped whole: a 409, then the next one is sent alone). Every
HTTP answer ≥ 400 and every transport error is counted, retried or not.

A churned journal (ChurnLoad) also has deletes and purges in its life, sent the same way; what
its writer got acknowledged, in order, is the timeline a feed follower must see.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from functools import partial

import httpx
from kjournal.client import AsyncClient
from kjournal.errors import AppendConflict
from kjournal.errors import KJournalError
from kjournal.errors import UnknownTopic
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import SeqNr

__all__ = ["ChurnLoad", "CountingTransport", "JournalLoad", "Ledger", "Op", "payload_of"]


def payload_of(key: Key, seq_nr: int, pad: int = 40) -> JsonValue:
    """What the load writes as event `seq_nr` of `key`: the checker knows it without a copy."""
    return {"journal": key.id, "seqNr": seq_nr, "pad": "p" * pad}


@dataclass
class Ledger:
    acknowledged: dict[Key, dict[int, JsonValue]] = field(default_factory=dict)
    unacknowledged: dict[Key, set[int]] = field(default_factory=dict)  # sent, never answered 201
    errors: Counter[str] = field(default_factory=Counter)  # every failed attempt, by status
    given_up: Counter[str] = field(default_factory=Counter)  # errors the client raised

    def acknowledge(self, key: Key, events: list[Event]) -> None:
        journal = self.acknowledged.setdefault(key, {})
        for event in events:
            assert isinstance(event.payload, JsonPayload)
            journal[int(event.seq_nr)] = event.payload.value
            self.unacknowledged.get(key, set()).discard(int(event.seq_nr))

    def leave_unacknowledged(self, key: Key, events: list[Event]) -> None:
        self.unacknowledged.setdefault(key, set()).update(int(e.seq_nr) for e in events)

    @property
    def acknowledged_events(self) -> int:
        return sum(len(journal) for journal in self.acknowledged.values())


class CountingTransport(httpx.AsyncBaseTransport):
    """httpx's transport, counting each answer ≥ 400 (by status) and each transport error (by
    type) into `errors`: the failures the client's retries hide."""

    def __init__(self, errors: Counter[str]) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._errors = errors

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx.TransportError as exc:
            self._errors[type(exc).__name__] += 1
            raise
        if response.status_code >= 400:
            self._errors[str(response.status_code)] += 1
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass
class JournalLoad:
    """One journal's writer: appends of 1..`max_batch` events every `pause_s` until `stop`."""

    client: AsyncClient
    key: Key
    ledger: Ledger
    give_up_at: float  # time.monotonic(): an append still failing then stays unacknowledged
    max_batch: int = 3
    pause_s: float = 0.05
    resend_every: int = 0  # resend every n-th acknowledged append as it was (0: never)
    overlap_every: int = 0  # every n-th append repeats the last acknowledged event (0: never)
    seed: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        rng = random.Random(f"{self.key.id}/{self.seed}")
        next_seq_nr, appends = 1, 0
        last: list[Event] = []
        while not stop.is_set() and time.monotonic() < self.give_up_at:
            appends += 1
            size = rng.randint(1, self.max_batch)
            events = [self._event(n) for n in range(next_seq_nr, next_seq_nr + size)]
            if self.overlap_every and last and appends % self.overlap_every == 0:
                await self.overlap([last[-1], *events])
            if not await self.deliver(events):
                return
            next_seq_nr = int(events[-1].seq_nr) + 1
            last = events
            if self.resend_every and appends % self.resend_every == 0:
                await self.deliver(events)  # identical: the journal must read it once
            await asyncio.sleep(self.pause_s)

    def _event(self, seq_nr: int) -> Event:
        return Event(SeqNr(seq_nr), payload=JsonPayload(payload_of(self.key, seq_nr)))

    async def overlap(self, events: list[Event]) -> None:
        """An append that repeats an acknowledged event: dropped whole (docs/concurrency.md), so
        answered 409 append-conflict, and nothing of it is read (the checker sees to that)."""
        while True:
            try:
                await self.client.append(self.key, events)
            except AppendConflict:
                self.ledger.given_up["AppendConflict (overlap, expected)"] += 1
                return
            except KJournalError as exc:
                self.ledger.given_up[type(exc).__name__] += 1
                if time.monotonic() >= self.give_up_at:
                    return
                await asyncio.sleep(0.5)
            else:
                raise AssertionError(f"{self.key}: an append overlapping {events[0]} was taken")

    async def deliver(self, events: list[Event]) -> bool:
        """Append until acknowledged (True), or False: the deadline passed or the topic is gone."""
        while True:
            try:
                await self.client.append(self.key, events)
            except KJournalError as exc:
                self.ledger.given_up[type(exc).__name__] += 1
                if isinstance(exc, UnknownTopic) or time.monotonic() >= self.give_up_at:
                    self.ledger.leave_unacknowledged(self.key, events)
                    return False
                await asyncio.sleep(0.5)
            else:
                self.ledger.acknowledge(self.key, events)
                return True


@dataclass(frozen=True)
class Op:
    """One acknowledged operation of a churned journal, in the order its writer sent them."""

    kind: str  # "append", "delete" or "purge"
    generation: int  # how many purges came before it
    seq_nrs: tuple[int, ...] = ()  # an append's
    to: int = 0  # a delete's


@dataclass
class ChurnLoad:
    """One journal's writer that appends, deletes up to an acknowledged seqNr now and then, and
    purges the journal every `purge_every` appends (its next append starts again at seqNr 1):
    the life of a journal a feed follower must see in order. Each operation is sent until it is
    acknowledged (retries as in JournalLoad); `ops` is what was acknowledged, in order, and
    `pending` the one operation still unanswered when the deadline passed, if any.

    Payloads carry the generation (the purges before them), so an event of a journal begun
    again is told from the one it replaces."""

    key: Key
    delete_every: int = 3
    purge_every: int = 8
    pause_s: float = 0.1
    ops: list[Op] = field(default_factory=list)
    pending: Op | None = None

    def payload(self, generation: int, seq_nr: int) -> JsonValue:
        return {"journal": self.key.id, "generation": generation, "seqNr": seq_nr}

    async def run(
        self, client: AsyncClient, ledger: Ledger, give_up_at: float, stop: asyncio.Event
    ) -> None:
        rng = random.Random(f"churn/{self.key.id}")
        generation, next_seq_nr, deleted_to, appends = 0, 1, 0, 0

        async def until_acknowledged(op: Op, send: Callable[[], Awaitable[object]]) -> bool:
            while True:
                try:
                    await send()
                except KJournalError as exc:
                    ledger.given_up[f"{type(exc).__name__} ({op.kind}, churn)"] += 1
                    if isinstance(exc, UnknownTopic) or time.monotonic() >= give_up_at:
                        self.pending = op
                        return False
                    await asyncio.sleep(0.5)
                else:
                    self.ops.append(op)
                    return True

        while not stop.is_set() and time.monotonic() < give_up_at:
            size = rng.randint(1, 3)
            seq_nrs = tuple(range(next_seq_nr, next_seq_nr + size))
            events = [
                Event(SeqNr(n), payload=JsonPayload(self.payload(generation, n))) for n in seq_nrs
            ]
            append = Op("append", generation, seq_nrs)
            if not await until_acknowledged(append, partial(client.append, self.key, events)):
                return
            appends += 1
            next_seq_nr = seq_nrs[-1] + 1
            if appends % self.purge_every == 0:
                if not await until_acknowledged(
                    Op("purge", generation), partial(client.purge, self.key)
                ):
                    return
                generation, next_seq_nr, deleted_to = generation + 1, 1, 0
            elif appends % self.delete_every == 0:
                to = rng.randint(deleted_to + 1, seq_nrs[-1])
                delete = Op("delete", generation, to=to)
                if not await until_acknowledged(delete, partial(client.delete, self.key, to)):
                    return
                deleted_to = to
            await asyncio.sleep(self.pause_s)

    def timeline(self, ops: list[Op] | None = None) -> list[tuple[object, ...]]:
        """What a feed follower of the journal gets for `ops` (default: the acknowledged ones),
        in order: ("event", seqNr, payload), ("delete", to), ("purge",)."""
        entries: list[tuple[object, ...]] = []
        for op in self.ops if ops is None else ops:
            if op.kind == "append":
                entries += [("event", n, self.payload(op.generation, n)) for n in op.seq_nrs]
            elif op.kind == "delete":
                entries.append(("delete", op.to))
            else:
                entries.append(("purge",))
        return entries

    def expected_read(self, ops: list[Op] | None = None) -> list[tuple[int, JsonValue]]:
        """The journal's events as readers must return them once `ops` (default: the
        acknowledged ones) are applied."""
        events: dict[int, JsonValue] = {}
        for op in self.ops if ops is None else ops:
            if op.kind == "append":
                events.update({n: self.payload(op.generation, n) for n in op.seq_nrs})
            elif op.kind == "delete":
                events = {n: p for n, p in events.items() if n > op.to}
            else:
                events = {}
        return sorted(events.items())
