"""The append race of issue 25: two writer processes, one reader, many client threads, one journal.

Each thread loops "read the pointer p, append p + 1 with If-Match: "p" (If-None-Match: * for a
journal that does not exist yet)", spread over both writers, while replication runs alongside.
Exactly one append wins each seqNr: the number of appends taken (201) is the final seqNr, every
other answer is 412 or 409, and the reader returns exactly seqNrs 1..N with the winners' payloads,
before and after replication, with no conflict recorded. No append is answered 504: the reader's
fold decided each fate when it consumed the record, so a replication racing the question cannot
hide it (issue 40).
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field

import httpx
import pytest
from kjournal.api.problems import PROBLEM_TYPE_PREFIX
from kjournal_dev.platform.lifecycle import Endpoints

from tests.integration.services import concurrency as c
from tests.integration.services.support import RunningService
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

THREADS = 16
ATTEMPTS = 12
"""Appends each thread tries (won or lost): THREADS × ATTEMPTS requests in all."""

PROBLEMS = {
    412: PROBLEM_TYPE_PREFIX + "condition-failed",
    409: PROBLEM_TYPE_PREFIX + "append-conflict",
}


@dataclass
class Tally:
    """What the threads were answered, under one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: Counter[str] = field(default_factory=Counter)
    won: dict[int, dict[str, int]] = field(default_factory=dict)
    resent: int = 0
    after_resending: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)

    def record(self, seq_nr: int, payload: dict[str, int], answer: c.Answer) -> None:
        with self.lock:
            self.resent += answer.resent
            label = "200 replay" if answer.replay else str(answer.status)
            self.statuses[label] += 1
            if answer.resent:
                self.after_resending[label] += 1
            if answer.status == 201 or answer.replay:
                if answer.replay and answer.resent == 0:
                    self.unexpected.append(f"a replay of an append sent once: {answer}")
                if seq_nr in self.won:
                    self.unexpected.append(f"seqNr {seq_nr} won twice: {answer}")
                self.won[seq_nr] = payload
                if answer.etag != f'"{seq_nr}"':
                    self.unexpected.append(f"a taken append of {seq_nr} tagged {answer.etag}")
            elif PROBLEMS.get(answer.status) != answer.problem_type:
                self.unexpected.append(f"an answer that is neither taken nor lost: {answer}")


def _client_thread(
    number: int, writer: str, reader: str, topic: str, id: str, tally: Tally
) -> None:
    with httpx.Client(timeout=60) as http:
        for attempt in range(ATTEMPTS):
            p = c.pointer(http, reader, topic, id)
            payload = {"thread": number, "attempt": attempt}
            answer = c.append(
                http, writer, topic, id, [{"seqNr": p + 1, "payload": payload}], expected_seq_nr=p
            )
            tally.record(p + 1, payload, answer)


def _replicate_until(replication: c.Replication, topic: str, done: threading.Event) -> int:
    """Replicate the topic again and again until `done`; how many passes ran."""
    passes = 0
    while not done.is_set():
        replication.run(topic)
        passes += 1
    return passes


def test_one_append_wins_each_seq_nr(
    platform: Endpoints,
    services_keyspace: str,
    writer: RunningService,
    second_writer: RunningService,
    reader: RunningService,
    topic: str,
    request: pytest.FixtureRequest,
) -> None:
    id = "race"
    tally = Tally()
    writers = [writer.url, second_writer.url]
    with c.replication(platform, services_keyspace) as replication:
        done = threading.Event()
        with ThreadPoolExecutor(THREADS + 1) as pool:
            replicating = pool.submit(_replicate_until, replication, topic, done)
            clients = [
                pool.submit(_client_thread, n, writers[n % 2], reader.url, topic, id, tally)
                for n in range(THREADS)
            ]
            try:
                for future in clients:
                    future.result()
            finally:
                done.set()
            passes = replicating.result()

        assert tally.unexpected == []
        assert tally.resent == 0, f"{tally.resent} appends were answered 504 outcome-unknown"
        with httpx.Client(timeout=60) as http:
            n = c.pointer(http, reader.url, topic, id)
            taken = tally.statuses["201"] + tally.statuses["200 replay"]
            expected = [(seq_nr, tally.won[seq_nr]) for seq_nr in sorted(tally.won)]
            assert taken == n
            assert sum(tally.statuses.values()) == THREADS * ATTEMPTS
            assert c.events(http, reader.url, topic, id) == expected
            assert [seq_nr for seq_nr, _ in expected] == list(range(1, n + 1))
            before = c.status(http, reader.url, topic, id)
            assert before is not None
            assert before["conflicts"] == []

            replication.run(topic)
            after = c.status(http, reader.url, topic, id)
            assert after is not None
            assert (after["unreplicatedActions"], after["pointer2"]) == (
                0,
                after["endOffset"] - 1,
            )
            assert after["conflicts"] == []
            assert after["seqNr"] == n
            assert c.pointer(http, reader.url, topic, id) == n
            assert c.events(http, reader.url, topic, id) == expected

    resent = _counts(tally.after_resending) or "-"
    add_session_report(
        request.config,
        "append race (issue 25)",
        f"{THREADS} threads × {ATTEMPTS} conditional appends over 2 writers, "
        f"{passes} replication passes alongside: final seqNr {n}; "
        f"answers {_counts(tally.statuses)}; 504s resent: {tally.resent} (finally answered "
        f"{resent}); events read 1..{n} before and after replication; conflicts: none",
    )


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{label}: {count}" for label, count in sorted(counter.items()))
