"""The unreplicated tail of a journal, and the ports that supply it (tail cache, Kafka scan)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import replace
from typing import Protocol

from kjournal.model import ActionRecord
from kjournal.model import Append
from kjournal.model import Key


@dataclass(frozen=True, slots=True)
class Tail:
    """One journal's actions at offsets [start, end) of its partition.

    Appends at offsets ≥ `payloads_from` were kept without their payload (the byte budget ran
    out): reading their events means reading Kafka again from there.
    """

    start: int
    end: int
    actions: tuple[ActionRecord, ...] = ()
    payloads_from: int | None = None


class TailScanner(Protocol):
    """The source that always knows: reading the partition itself."""

    async def tail(self, key: Key, partition: int, start: int, end: int) -> Tail: ...

    def actions(
        self, key: Key, partition: int, start: int, end: int
    ) -> AsyncIterator[ActionRecord]: ...


class JournalPartitions(Protocol):
    """Which partition a journal lives in, and where that partition ends."""

    async def partition(self, key: Key) -> int: ...

    async def end_offset(self, topic: str, partition: int) -> int: ...


class TailBuilder:
    """Collects a tail, keeping append payloads up to a byte budget and headers beyond it."""

    def __init__(self, start: int, end: int, payload_budget: int) -> None:
        self._start = start
        self._end = end
        self._budget = payload_budget
        self._used = 0
        self._actions: list[ActionRecord] = []
        self._payloads_from: int | None = None

    def add(self, record: ActionRecord) -> None:
        action = record.action
        if isinstance(action, Append):
            if self._payloads_from is None and self._used + len(action.payload) > self._budget:
                self._payloads_from = record.offset
            if self._payloads_from is not None:
                record = ActionRecord(replace(action, payload=b""), record.partition_offset)
            else:
                self._used += len(action.payload)
        self._actions.append(record)

    def build(self) -> Tail:
        return Tail(self._start, self._end, tuple(self._actions), self._payloads_from)
