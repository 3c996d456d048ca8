"""An in-memory model of what Cassandra must hold once everything written is replicated."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from dataclasses import field

from kjournal.journal import Journals
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr


@dataclass
class JournalModel:
    events: list[Event] = field(default_factory=list)
    delete_to: int = 0

    @property
    def last(self) -> int:
        return self.events[-1].seq_nr if self.events else 0

    def visible(self) -> list[Event]:
        return [event for event in self.events if event.seq_nr > self.delete_to]


@dataclass
class Model:
    topic: str
    journals: dict[str, JournalModel] = field(default_factory=dict)

    def journal(self, id: str) -> JournalModel:
        return self.journals.setdefault(id, JournalModel())

    def expected(self) -> dict[str, list[Event]]:
        return {id: journal.visible() for id, journal in self.journals.items()}


def events(id: str, first: int, count: int) -> list[Event]:
    return [
        Event(SeqNr(seq), payload=JsonPayload({"id": id, "seq": seq}))
        for seq in range(first, first + count)
    ]


async def append(journals: Journals, model: Model, id: str, count: int) -> None:
    journal = model.journal(id)
    batch = events(id, journal.last + 1, count)
    await journals.journal(Key(model.topic, id)).produce(batch)
    journal.events.extend(batch)


async def delete(journals: Journals, model: Model, id: str, to: int) -> None:
    journal = model.journal(id)
    await journals.journal(Key(model.topic, id)).delete(to)
    journal.delete_to = max(journal.delete_to, min(to, journal.last))


async def purge(journals: Journals, model: Model, id: str) -> None:
    await journals.journal(Key(model.topic, id)).purge()
    model.journals[id] = JournalModel()


async def random_workload(
    journals: Journals, model: Model, ids: list[str], actions: int, seed: int
) -> None:
    """`actions` appends, deletes and purges per journal: journals concurrently, each in order."""

    async def one(id: str) -> None:
        rng = random.Random(f"{seed}-{id}")
        for _ in range(actions):
            roll = rng.random()
            journal = model.journal(id)
            if roll < 0.08 and journal.last > 0:
                await delete(journals, model, id, rng.randint(1, journal.last))
            elif roll < 0.1 and journal.last > 0:
                await purge(journals, model, id)
            else:
                await append(journals, model, id, rng.randint(1, 4))

    await asyncio.gather(*(one(id) for id in ids))
