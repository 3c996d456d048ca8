"""Outcomes asked late: after replication, and a delete or purge of the journal, passed the append.

A writer that produced an append and paused before asking its outcome (a GC, a frozen VM) asks
when the replicator has long copied the append, and a later delete or purge of the journal with
it. Cassandra then shows nothing of the journal the append met; the reader's fold decided the
append's fate when it consumed the record, so the answer is still the fate the log fixed (the
slow path's answer from what reads return would be "unknown": docs/concurrency.md). Real Kafka,
Cassandra, reader and writer; replication with the replicator's own function
(`replicate_partition`) into the services keyspace, run when the test says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from kjournal.journal import Journal
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services import concurrency as c
from tests.integration.services.support import RunningService

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


def _events(first: int, last: int, variant: int) -> list[Event]:
    return [
        Event(SeqNr(n), payload=JsonPayload({"n": n, "variant": variant}))
        for n in range(first, last + 1)
    ]


async def _purge(journal: Journal) -> None:
    await journal.purge()


async def _delete_all(journal: Journal) -> None:
    await journal.delete(10)


async def _nothing(journal: Journal) -> None:
    return None


Scenario = tuple[
    list[Event],  # taken through the writer first
    list[Event],  # then produced raw, its outcome asked at the end
    int | None,  # the raw append's condition
    Callable[[Journal], Awaitable[None]],  # then done to the journal
    dict[str, Any],  # the answer: outcome and seqNr
]

SCENARIOS: dict[str, Scenario] = {
    "a conflict, then a purge": (
        _events(1, 1, 0),
        _events(1, 1, 1),
        None,
        _purge,
        {"outcome": "conflict", "seqNr": 1},
    ),
    "a taken append, then a purge": (
        _events(1, 1, 0),
        _events(2, 3, 0),
        None,
        _purge,
        {"outcome": "taken", "seqNr": 3},
    ),
    "a replay, then a delete of everything": (
        _events(1, 2, 0),
        _events(1, 2, 0),
        None,
        _delete_all,
        {"outcome": "replay", "seqNr": 2},
    ),
    "a refused condition, then a purge": (
        _events(1, 1, 0),
        _events(2, 2, 1),
        0,
        _purge,
        {"outcome": "refused", "seqNr": 1},
    ),
    "a gap, replicated": (
        _events(1, 1, 0),
        _events(200_003, 200_003, 0),
        None,
        _nothing,
        {"outcome": "gap", "seqNr": 1},
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_an_outcome_asked_after_replication_passed_it_is_the_fate_the_log_fixed(
    name: str,
    platform: Endpoints,
    services_keyspace: str,
    writer: RunningService,
    reader: RunningService,
    topic: str,
) -> None:
    first, late, expect, then, answer = SCENARIOS[name]
    key = Key(topic, f"late-{name.replace(' ', '-').replace(',', '')}")
    with httpx.Client(timeout=60) as http:
        taken = c.append(http, writer.url, topic, key.id, [_json(e) for e in first])
        assert taken.status == 201, taken  # the reader follows the topic from here on

        late_offset = asyncio.run(_produce_then(platform, key, late, expect, then))
        c.pointer(http, reader.url, topic, key.id)  # the fold has consumed all of it
        with c.replication(platform, services_keyspace) as replication:
            replication.run(topic)

        response = http.get(c.journal_url(reader.url, topic, key.id, f"/appends/{late_offset}"))
        assert response.status_code == 200, response.text
        body = response.json()
        assert {"outcome": body["outcome"], "seqNr": body["seqNr"]} == answer
        if answer["outcome"] == "replay":
            assert body["offset"] == taken.body["offset"]  # the copy readers returned


def _json(event: Event) -> dict[str, Any]:
    assert isinstance(event.payload, JsonPayload)
    return {"seqNr": event.seq_nr, "payload": event.payload.value}


async def _produce_then(
    platform: Endpoints,
    key: Key,
    events: list[Event],
    expect: int | None,
    then: Callable[[Journal], Awaitable[None]],
) -> int:
    """Produce `events` raw (as a writer does before it asks), then `then`: the append's offset."""
    async with Journals(KafkaSettings(bootstrap_servers=platform.kafka_bootstrap)) as journals:
        journal = journals.journal(key)
        produced = await journal.produce(events, expect=expect)
        await then(journal)
        return produced.partition_offset.offset
