"""The fold's journal listing (read/known.py; docs/concurrency.md, "Journals the fold knows are
new"): once a followed topic's journals are listed from Cassandra, a journal met for the first
time that has no head starts empty without its head read, and one whose records lie wholly below
the fold's start (replicated before the reader followed the topic) is still judged by its head.

Real Kafka, Cassandra, reader and writer; replication with the replicator's own function into the
services keyspace before the reader is first asked about the topic.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from kjournal.metrics.catalogue import FOLD_LISTINGS
from kjournal.metrics.catalogue import FOLD_NEW_STARTS
from kjournal.metrics.catalogue import FOLD_STARTS
from kjournal.model import Key
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services import concurrency as c
from tests.integration.services.support import RunningService
from tests.integration.services.support import produce_events
from tests.integration.services.support import topic_counters

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

LISTING_DEADLINE_S = 120.0


def _counters(http: httpx.Client, reader: str, topic: str) -> dict[str, float]:
    names = (FOLD_LISTINGS.name, FOLD_NEW_STARTS.name, FOLD_STARTS.name)
    return topic_counters(http, reader, topic, *names)


def _listed(http: httpx.Client, reader: str, topic: str) -> dict[str, float]:
    """Wait until the reader has listed the topic's journals; its fold counters then."""
    deadline = time.monotonic() + LISTING_DEADLINE_S
    while True:
        counters = _counters(http, reader, topic)
        if counters[FOLD_LISTINGS.name] >= 1:
            return counters
        assert time.monotonic() < deadline, f"the journals of {topic} were not listed"
        time.sleep(0.05)


def _events(first: int, last: int, variant: int) -> list[dict[str, Any]]:
    return [{"seqNr": n, "payload": {"n": n, "variant": variant}} for n in range(first, last + 1)]


def test_journals_met_first_are_judged_by_the_listing_and_old_ones_by_their_heads(
    platform: Endpoints,
    services_keyspace: str,
    writer: RunningService,
    reader: RunningService,
    topic: str,
) -> None:
    old = Key(topic, "replicated-before-the-reader-followed")
    produce_events(platform.kafka_bootstrap, old, 2)
    with c.replication(platform, services_keyspace) as replication:
        replication.run(topic)  # pointer2 passes old's records: the fold starts after them

    with httpx.Client(timeout=60) as http:
        assert c.pointer(http, reader.url, topic, "asked-first") == 0  # the topic is followed
        before = _listed(http, reader.url, topic)

        fresh = [f"fresh-{n}" for n in range(5)]
        for id_ in fresh:
            answer = c.append(http, writer.url, topic, id_, _events(1, 2, 0))
            assert answer.status == 201, answer
        after_fresh = _counters(http, reader.url, topic)
        assert after_fresh[FOLD_NEW_STARTS.name] - before[FOLD_NEW_STARTS.name] == len(fresh)
        assert after_fresh[FOLD_STARTS.name] == before[FOLD_STARTS.name]
        for id_ in fresh:
            assert c.events(http, reader.url, topic, id_) == [
                (n, {"n": n, "variant": 0}) for n in (1, 2)
            ]

        # old has a head and no record the fold met: the listing names it, so its head is read
        replay = c.append(http, writer.url, topic, old.id, _events(1, 2, 0))
        assert replay.status == 200, replay
        assert replay.replay, replay
        conflict = c.append(http, writer.url, topic, old.id, _events(1, 1, 1))
        assert conflict.status == 409, conflict
        taken = c.append(http, writer.url, topic, old.id, _events(3, 3, 0))
        assert taken.status == 201, taken
        after_old = _counters(http, reader.url, topic)
        assert after_old[FOLD_STARTS.name] == before[FOLD_STARTS.name] + 1
        assert after_old[FOLD_NEW_STARTS.name] == after_fresh[FOLD_NEW_STARTS.name]
        assert c.pointer(http, reader.url, topic, old.id) == 3
