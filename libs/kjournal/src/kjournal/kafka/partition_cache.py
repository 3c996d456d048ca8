"""What the tail cache knows about one partition: each journal's unreplicated actions."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace

from kjournal.model import ActionRecord, Append
from kjournal.tail import Tail


@dataclass(slots=True)
class _Journal:
    actions: deque[ActionRecord] = field(default_factory=deque)
    complete_from: int = 0  # actions of this journal before this offset may have been evicted
    payloads_from: int | None = None  # appends from this offset on were kept without payload


class PayloadBudget:
    """Bytes of unreplicated append payloads the cache may hold, shared by all partitions."""

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


class PartitionCache:
    """Unreplicated actions of one partition, by journal id.

    replicated: pointer2 as last seen; actions at or below it are dropped.
    seen_until: the highest offset consumed.
    evicted_up_to: journals were evicted whole, all their actions at offsets ≤ this.
    A query is answered only when the cache covers it completely; otherwise it is "unknown".
    """

    def __init__(self, replicated: int, max_journals: int, budget: PayloadBudget) -> None:
        self.replicated = replicated
        self.seen_until = replicated
        self.evicted_up_to = -1
        self._max_journals = max_journals
        self._budget = budget
        self._journals: dict[str, _Journal] = {}
        self._order: deque[tuple[int, str]] = deque()

    @property
    def journals(self) -> int:
        return len(self._journals)

    def add(self, id: str, record: ActionRecord) -> None:
        offset = record.offset
        if offset <= self.replicated:
            return
        journal = self._journals.get(id)
        if journal is None:
            if len(self._journals) >= self._max_journals:
                self._evict()
            # any earlier action of this journal was evicted, so it sat at or below evicted_up_to
            journal = self._journals[id] = _Journal(complete_from=self.evicted_up_to + 1)
        action = record.action
        if isinstance(action, Append) and action.payload:
            kept = journal.payloads_from is None and self._budget.take(len(action.payload))
            if not kept:
                # from here on this journal's payloads are read from Kafka again when needed
                if journal.payloads_from is None:
                    journal.payloads_from = offset
                record = ActionRecord(replace(action, payload=b""), record.partition_offset)
        journal.actions.append(record)
        self._order.append((offset, id))

    def seen(self, offset: int) -> None:
        self.seen_until = max(self.seen_until, offset)

    def replicated_up_to(self, offset: int) -> None:
        """pointer2 advanced: drop everything at or below `offset`."""
        if offset <= self.replicated:
            return
        self.replicated = offset
        self.seen_until = max(self.seen_until, offset)
        while self._order and self._order[0][0] <= offset:
            _, id = self._order.popleft()
            journal = self._journals.get(id)
            if journal is None or not journal.actions:
                continue
            if journal.actions[0].offset > offset:
                continue
            dropped = journal.actions.popleft()
            self._release(dropped)
            if not journal.actions:
                del self._journals[id]
            elif journal.payloads_from is not None and journal.payloads_from <= offset:
                journal.payloads_from = next(
                    (a.offset for a in journal.actions if isinstance(a.action, Append)), None
                )

    def tail(self, id: str, start: int, end: int) -> Tail | None:
        """The journal's actions in [start, end), or None if the cache cannot be sure of them."""
        if start <= self.replicated or self.seen_until < end - 1:
            return None
        journal = self._journals.get(id)
        if journal is None:
            return None if start <= self.evicted_up_to else Tail(start, end)
        if start < journal.complete_from:
            return None
        actions = tuple(a for a in journal.actions if start <= a.offset < end)
        payloads_from = journal.payloads_from
        if payloads_from is not None and payloads_from >= end:
            payloads_from = None
        if payloads_from is not None and payloads_from < start:
            payloads_from = next((a.offset for a in actions if isinstance(a.action, Append)), None)
        return Tail(start, end, actions, payloads_from)

    def clear(self) -> None:
        for journal in self._journals.values():
            for record in journal.actions:
                self._release(record)
        self._journals.clear()
        self._order.clear()

    def _release(self, record: ActionRecord) -> None:
        action = record.action
        if isinstance(action, Append) and action.payload:
            self._budget.give_back(len(action.payload))

    def _evict(self) -> None:
        """Drop the tenth of journals whose newest action is oldest."""
        by_newest = sorted(self._journals.items(), key=lambda item: item[1].actions[-1].offset)
        for id, journal in by_newest[: max(1, len(by_newest) // 10)]:
            self.evicted_up_to = max(self.evicted_up_to, journal.actions[-1].offset)
            for record in journal.actions:
                self._release(record)
            del self._journals[id]
