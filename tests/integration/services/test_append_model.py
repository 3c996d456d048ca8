"""Appends, deletes and purges from several writers, against a naive model of the append rule.

A Hypothesis state machine drives two writer processes and one reader over real HTTP, with
replication into the services keyspace's Cassandra at random points. Each step is one of:
conditional appends (right or stale), unconditional ones (next, with a gap, or over seqNrs the
journal holds), identical resends of earlier appends, two appends sent at once through both
writers, deletes, purges, replication. The model applies the rule of docs/concurrency.md naively
and predicts each answer (201, 200 replay, 409, 412); after every step the reader must return
exactly the model's events and seqNr. So every 2xx append is read (until a delete or purge
removes it) and no 409/412 append ever is.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule
from hypothesis.stateful import run_state_machine_as_test
from kjournal.fold.append_rule import MAX_GAP
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from tests.integration.services import concurrency as c
from tests.integration.services.support import RunningService
from tests.integration.services.support import wait_for_topic
from tests.support.platform import unique_name

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(600)]

JOURNALS = ("a", "b")
KINDS = ("if-match", "stale-if-match", "if-none-match", "next", "gap", "overlap")
STATUS = {"taken": 201, "replay": 200, "conflict": 409, "gap": 409, "refused": 412}


@dataclass(frozen=True)
class Spec:
    """One append as sent: its events (seqNr, payload) and its condition."""

    events: tuple[tuple[int, int], ...]
    expect: int | None

    @property
    def first(self) -> int:
        return self.events[0][0]

    @property
    def last(self) -> int:
        return self.events[-1][0]

    def body(self) -> list[dict[str, Any]]:
        return [{"seqNr": n, "payload": {"w": w}} for n, w in self.events]


@dataclass
class Journal:
    """The model: what the journal holds since its last purge."""

    seq_nr: int | None = None
    events: dict[int, int] = field(default_factory=dict)
    delete_to: int = 0

    def visible(self) -> list[tuple[int, Any]]:
        return [(n, {"w": w}) for n, w in sorted(self.events.items()) if n > self.delete_to]

    def outcome(self, spec: Spec) -> str:
        """The append rule, naively: taken whole, or dropped whole as a replay (every event is
        one the journal holds and returns, the same), a refusal (it had a condition), a gap (it
        skips more than MAX_GAP seqNrs) or a conflict. A seqNr no reader returns (deleted, in a gap, below the journal's first) is
        never part of a replay: no 2xx for events no reader returns."""
        s = self.seq_nr
        if spec.expect is None:
            taken = s is None or s < spec.first <= s + 1 + MAX_GAP
        elif spec.expect == 0:
            taken = s is None
        else:
            taken = s == spec.expect and spec.first == s + 1
        if taken:
            return "taken"
        identical = (
            s is not None
            and spec.last <= s
            and all(n > self.delete_to and self.events.get(n) == w for n, w in spec.events)
        )
        if identical:
            return "replay"
        if spec.expect is not None:
            return "refused"
        return "gap" if s is not None and spec.first > s else "conflict"

    def apply(self, spec: Spec) -> str:
        kind = self.outcome(spec)
        if kind == "taken":
            if self.seq_nr is None:  # seqNrs below a journal's first count as deleted, as
                self.delete_to = spec.first - 1  # kafka-journal's head info has them (deleteTo)
            self.seq_nr = spec.last
            self.events.update(spec.events)
        return kind


def _check_answer(spec: Spec, kind: str, answer: c.Answer) -> None:
    if kind == "taken" and answer.resent and answer.replay:
        return  # the copy first answered 504 was taken after all: the resend is its replay
    assert answer.status == STATUS[kind], f"{spec}: the model says {kind}, got {answer}"
    if kind == "replay":
        assert answer.replay, answer
    if kind == "taken":
        assert answer.etag == f'"{spec.last}"', answer


@pytest.fixture
def model_topic(platform: Endpoints) -> Iterator[str]:
    """A one-partition topic: a replication step is one partition's."""
    name = unique_name("journal_m")
    asyncio.run(create_topic(platform.kafka_bootstrap, name, 1))
    yield wait_for_topic(platform.kafka_bootstrap, name)
    asyncio.run(delete_topics(platform.kafka_bootstrap, [name]))


def test_the_reader_returns_what_the_model_of_the_append_rule_holds(
    platform: Endpoints,
    services_keyspace: str,
    writer: RunningService,
    second_writer: RunningService,
    reader: RunningService,
    model_topic: str,
) -> None:
    topic = model_topic
    writers = (writer.url, second_writer.url)
    payloads = itertools.count(1)

    with (
        c.replication(platform, services_keyspace) as replication,
        httpx.Client(timeout=60) as http,
        ThreadPoolExecutor(2) as pool,
    ):

        class Appends(RuleBasedStateMachine):
            def __init__(self) -> None:
                super().__init__()
                self.prefix = uuid.uuid4().hex[:8]
                self.model = {name: Journal() for name in JOURNALS}
                self.sent: list[tuple[str, Spec]] = []

            def _id(self, name: str) -> str:
                return f"{self.prefix}-{name}"

            def _spec(self, name: str, kind: str, size: int, pick: int) -> Spec:
                s = self.model[name].seq_nr or 0
                expect: int | None = None
                if kind == "if-match":
                    expect, first = s, s + 1
                elif kind == "stale-if-match":
                    expect = s + 1 + pick % 2 if s == 0 or pick % 3 == 0 else pick % s
                    first = expect + 1
                elif kind == "if-none-match":
                    expect, first = 0, 1
                elif kind == "next":
                    first = s + 1
                elif kind == "gap":
                    first = s + 2
                else:  # overlap: from a seqNr the journal holds (or 1)
                    first = 1 + pick % max(s, 1)
                events = tuple((first + n, next(payloads)) for n in range(size))
                return Spec(events, expect)

            def _send(self, name: str, spec: Spec, writer_index: int) -> c.Answer:
                self.sent.append((name, spec))
                return c.append(
                    http,
                    writers[writer_index],
                    topic,
                    self._id(name),
                    spec.body(),
                    spec.expect,
                )

            @rule(
                name=st.sampled_from(JOURNALS),
                writer_index=st.integers(0, 1),
                kind=st.sampled_from(KINDS),
                size=st.integers(1, 3),
                pick=st.integers(0, 1000),
            )
            def append(self, name: str, writer_index: int, kind: str, size: int, pick: int) -> None:
                spec = self._spec(name, kind, size, pick)
                answer = self._send(name, spec, writer_index)
                _check_answer(spec, self.model[name].apply(spec), answer)

            @precondition(lambda self: bool(self.sent))
            @rule(writer_index=st.integers(0, 1), pick=st.integers(0, 1000))
            def resend(self, writer_index: int, pick: int) -> None:
                """An earlier append sent again as it was (a client's retry)."""
                name, spec = self.sent[pick % len(self.sent)]
                answer = self._send(name, spec, writer_index)
                _check_answer(spec, self.model[name].apply(spec), answer)

            @rule(
                name=st.sampled_from(JOURNALS),
                kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
                size=st.integers(1, 2),
                pick=st.integers(0, 1000),
            )
            def race(self, name: str, kinds: tuple[str, str], size: int, pick: int) -> None:
                """Two appends to one journal at once, one through each writer: the answers
                must be those of one order of the two, and the journal that order's."""
                specs = [self._spec(name, kind, size, pick) for kind in kinds]
                futures = [pool.submit(self._send, name, spec, n) for n, spec in enumerate(specs)]
                answers = [future.result() for future in futures]
                orders = []
                for order in ((0, 1), (1, 0)):
                    journal = copy.deepcopy(self.model[name])
                    kinds_met = {i: journal.apply(specs[i]) for i in order}
                    if all(answers[i].status == STATUS[kinds_met[i]] for i in (0, 1)):
                        orders.append(journal)
                assert orders, f"{specs}: no order of the two explains {answers}"
                id = self._id(name)
                read = c.events(http, reader.url, topic, id), c.pointer(http, reader.url, topic, id)
                matching = [j for j in orders if (j.visible(), j.seq_nr or 0) == read]
                assert matching, f"{specs} answered {answers}: the reader returns {read}"
                self.model[name] = matching[0]

            @precondition(lambda self: any(j.seq_nr for j in self.model.values()))
            @rule(name=st.sampled_from(JOURNALS), back=st.integers(-1, 3))
            def delete(self, name: str, back: int) -> None:
                journal = self.model[name]
                if journal.seq_nr is None:
                    return
                to = max(1, journal.seq_nr - back)
                response = http.delete(
                    c.journal_url(writers[back % 2], topic, self._id(name), "/events"),
                    params={"to": to},
                )
                assert response.status_code == 202, response.text
                journal.delete_to = max(journal.delete_to, min(to, journal.seq_nr))

            @rule(name=st.sampled_from(JOURNALS), writer_index=st.integers(0, 1))
            def purge(self, name: str, writer_index: int) -> None:
                response = http.delete(c.journal_url(writers[writer_index], topic, self._id(name)))
                assert response.status_code == 202, response.text
                self.model[name] = Journal()

            @rule()
            def replicate(self) -> None:
                replication.run(topic, partitions=1)

            @invariant()
            def the_reader_returns_the_model(self) -> None:
                for name, journal in self.model.items():
                    id = self._id(name)
                    assert c.events(http, reader.url, topic, id) == journal.visible(), name
                    assert c.pointer(http, reader.url, topic, id) == (journal.seq_nr or 0), name

            def teardown(self) -> None:
                replication.run(topic, partitions=1)
                self.the_reader_returns_the_model()

        run_state_machine_as_test(
            Appends,
            settings=settings(
                max_examples=20,
                stateful_step_count=10,
                deadline=None,
                database=None,
                phases=[Phase.explicit, Phase.generate],  # shrinking real services takes minutes
                suppress_health_check=list(HealthCheck),
            ),
        )


def test_an_append_into_a_gap_is_no_replay(
    writer: RunningService, reader: RunningService, topic: str
) -> None:
    """A journal that skipped seqNr 1 (its first append was seqNr 2) never returns a seqNr 1:
    an append of seqNr 1 is dropped, and must not be answered 2xx as if readers returned it.

    The journal's head info counts the seqNrs below its first as deleted (deleteTo = 1, as in
    kafka-journal); a seqNr no reader returns is never part of a replay."""
    id = "gap"
    with httpx.Client(timeout=60) as http:
        assert c.append(http, writer.url, topic, id, [{"seqNr": 2, "payload": 2}]).status == 201
        unconditional = c.append(http, writer.url, topic, id, [{"seqNr": 1, "payload": 1}])
        absent = c.append(http, writer.url, topic, id, [{"seqNr": 1, "payload": 1}], 0)
        assert c.events(http, reader.url, topic, id) == [(2, 2)]
    assert (unconditional.status, absent.status) == (409, 412), (unconditional, absent)
