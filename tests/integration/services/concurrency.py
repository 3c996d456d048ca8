"""Concurrent appends over real HTTP (issue 25): raw appends whose status codes the tests count,
reads of a journal as the reader returns it, and replication into the services keyspace.

Appends go through httpx, not `kjournal.client`, so that every answer's status is seen as sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from cassandra.cluster import Session
from kjournal.api import quote_segment
from kjournal.api.conditions import condition_headers
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.replay import end_offsets
from kjournal_dev.platform.replay import replicate

RESENDS = 20
"""How many times an append answered 504 (outcome unknown: resending is safe) is sent again."""


def journal_url(base: str, topic: str, id: str, suffix: str = "") -> str:
    return f"{base}/v1/journals/{quote_segment(topic)}/{quote_segment(id)}{suffix}"


@dataclass(frozen=True)
class Answer:
    """A writer's final answer to one append (after resending any 504s)."""

    status: int
    body: dict[str, Any]
    etag: str | None
    resent: int

    @property
    def replay(self) -> bool:
        return self.status == 200 and bool(self.body.get("replay"))

    @property
    def problem_type(self) -> str:
        return str(self.body.get("type", ""))


def append(
    http: httpx.Client,
    writer: str,
    topic: str,
    id: str,
    events: list[dict[str, Any]],
    expected_seq_nr: int | None = None,
) -> Answer:
    """POST the append, resending it as long as the writer answers 504 outcome-unknown."""
    url = journal_url(writer, topic, id, "/events")
    headers = condition_headers(expected_seq_nr)
    resent = 0
    while True:
        response = http.post(url, json={"events": events}, headers=headers)
        if response.status_code != 504 or resent == RESENDS:
            break
        resent += 1
    body = json.loads(response.content) if response.content else {}
    return Answer(response.status_code, body, response.headers.get("etag"), resent)


def pointer(http: httpx.Client, reader: str, topic: str, id: str) -> int:
    """The journal's seqNr as the reader answers it (0 for 404), checked against its ETag."""
    response = http.get(journal_url(reader, topic, id, "/pointer"))
    if response.status_code == 404:
        return 0
    assert response.status_code == 200, response.text
    seq_nr = int(response.json()["seqNr"])
    assert response.headers["etag"] == f'"{seq_nr}"'
    return seq_nr


def events(http: httpx.Client, reader: str, topic: str, id: str) -> list[tuple[int, Any]]:
    """(seqNr, payload) of every event the reader returns ([] for 404)."""
    response = http.get(journal_url(reader, topic, id, "/events"))
    if response.status_code == 404:
        return []
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in response.text.splitlines() if line]
    assert all("problem" not in line for line in lines), lines
    return [(line["seqNr"], line.get("payload")) for line in lines]


def status(http: httpx.Client, reader: str, topic: str, id: str) -> dict[str, Any] | None:
    response = http.get(journal_url(reader, topic, id))
    if response.status_code == 404:
        return None
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


class Replication:
    """Replication of a topic into the services keyspace's Cassandra, as the replicator does it
    (kjournal.replicate.replicate_partition over CassandraReplicatedStore)."""

    def __init__(self, platform: Endpoints, session: Session, keyspace: str) -> None:
        self._bootstrap = platform.kafka_bootstrap
        self.store = CassandraReplicatedStore(session, TableNames(keyspace=keyspace))

    async def _run(self, topic: str, partitions: int) -> None:
        ends = await end_offsets(self._bootstrap, topic, partitions)
        for partition in range(partitions):
            await replicate(self._bootstrap, topic, partition, self.store, ends[partition])

    def run(self, topic: str, partitions: int = 4) -> None:
        """Replicate every partition of `topic` up to its end offset now."""
        asyncio.run(self._run(topic, partitions))


@contextmanager
def replication(platform: Endpoints, keyspace: str) -> Iterator[Replication]:
    session = connect(
        CassandraSettings(contact_points=(platform.cassandra_host,), port=platform.cassandra_port)
    )
    try:
        yield Replication(platform, session, keyspace)
    finally:
        session.cluster.shutdown()
