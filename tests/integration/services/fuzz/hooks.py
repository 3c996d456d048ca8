"""Schemathesis hooks for fuzzing the writer and reader (loaded by schemathesis.toml).

The schema states every rule a JSON Schema can; the hooks add what it cannot:

* an append carries one condition, `If-Match` or `If-None-Match` (both is a 400: the schema
  cannot say "not both"): of a generated pair with a valid `If-None-Match: *`, one is dropped,
  each in turn (a pair with an invalid `If-None-Match` stays, so a negative case stays negative);
* seqNrs strictly increase within an append: a generated list of valid seqNrs is renumbered
  upwards from its first (an invalid seqNr is left alone, so a negative case stays negative);
  under a valid `If-Match: "p"` they start at p + 1; an append without a condition starts right
  after the seqNr its journal's last 2xx answer named (so that it is taken, rather than a
  conflict or a gap of more than MAX_GAP), or far up in a journal the run did not write;
* an append's outcome is asked, in half the cases, of offset 0: the journal the test appended
  holds the first record of its partition;
* data to find: a topic matching the schema becomes, for most cases, the test's existing topic
  (`KJOURNAL_FUZZ_TOPIC`), and an id, for half the cases, the journal the test appended
  (`KJOURNAL_FUZZ_ID`), so reads reach Cassandra and Kafka rather than a 404;
* a topic feed's schema-valid `after` and `Last-Event-ID` are dropped and its valid `partitions`
  become "0" (cursors are opaque, partitions the topic's), and it is asked for NDJSON;
* NDJSON answers: every line is an event (or journal id, or feed entry) or the final `problem`
  line, and each operation answered 2xx at least once in the run.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import re
from collections.abc import MutableMapping
from typing import Any

import schemathesis
from kjournal.api.schemas import EXACT_FLOAT_LIMIT
from kjournal.api.schemas import EventOut
from kjournal.api.schemas import FeedEntryOut
from kjournal.api.schemas import JournalIdOut
from kjournal.api.schemas import OutcomeLineOut
from kjournal.api.schemas import Problem
from kjournal.model.seq_nr import SEQ_NR_MAX
from pydantic import BaseModel

TOPIC = os.environ.get("KJOURNAL_FUZZ_TOPIC")
JOURNAL_ID = os.environ.get("KJOURNAL_FUZZ_ID")
_TOPIC_SHAPE = re.compile(r"journal[a-zA-Z0-9._-]{0,242}")
_LINE_MODELS: dict[str, type[BaseModel]] = {
    "/v1/journals/{topic}/{id}/events": EventOut,
    "/v1/topics/{topic}/journals": JournalIdOut,
    "/v1/topics/{topic}/events": FeedEntryOut,
    "/v1/topics/{topic}/outcomes": OutcomeLineOut,
}
# Answers whose every line may carry a problem (one per question), not only a final one.
_PROBLEMS_PER_LINE = {"/v1/topics/{topic}/outcomes"}
_FEED = "/v1/topics/{topic}/events"
_PARTITIONS_SHAPE = re.compile(r"(0|[1-9][0-9]{0,9})(,(0|[1-9][0-9]{0,9}))*")


def _feed_query(query: Any, headers: MutableMapping[str, Any] | None) -> Any:
    """A topic feed's cursor is opaque and its partitions the topic's: a generated `after` (or
    `Last-Event-ID`) that the schema accepts is dropped, and accepted `partitions` become "0",
    so that a valid request reads the feed rather than a 400 for a cursor no feed gave (a
    negative case, an empty `after` or a malformed `partitions`, stays negative). The answer is
    asked as NDJSON: a live tail never ends."""
    if headers is not None:
        headers.pop("Last-Event-ID", None)
        headers["Accept"] = "application/x-ndjson"
    if not isinstance(query, dict):
        return query
    query = dict(query)
    if isinstance(query.get("after"), str) and query["after"]:
        del query["after"]
    partitions = query.get("partitions")
    if isinstance(partitions, str) and _PARTITIONS_SHAPE.fullmatch(partitions):
        query["partitions"] = "0"
    return query


def _valid_seq_nr(value: Any) -> bool:
    if type(value) is float and value.is_integer() and abs(value) < EXACT_FLOAT_LIMIT:
        value = int(value)
    return type(value) is int and 1 <= value <= SEQ_NR_MAX


_cases = itertools.count()
# Which cases get the existing topic, id and offset: drawn, not taken from the case count's
# parity, which a run that sends requests in pairs (a check's extra request) keeps the same for
# every case of an operation.
_draws = random.Random(os.environ.get("KJOURNAL_FUZZ_SEED", "20261125"))


_ENTITY_TAG = re.compile(r'"?(0|[1-9][0-9]{0,17})"?')
_fresh = itertools.count(10**12, 10**6)


_written: dict[tuple[str, str], int] = {}
"""The seqNr of each journal the run appended to (from its 2xx answers)."""


def _journal(parameters: Any) -> tuple[str, str] | None:
    if not isinstance(parameters, dict):
        return None
    topic, id_ = parameters.get("topic"), parameters.get("id")
    return (topic, id_) if isinstance(topic, str) and isinstance(id_, str) else None


def _increasing(body: Any, expected: int | None, journal: tuple[str, str] | None) -> Any:
    events = body.get("events") if isinstance(body, dict) else None
    if not isinstance(events, list) or not events:
        return body
    if not all(isinstance(e, dict) and _valid_seq_nr(e.get("seqNr")) for e in events):
        return body
    body = copy.deepcopy(body)
    if expected is not None:
        first = expected + 1
    elif journal in _written:  # right after its seqNr: taken, not a conflict or a gap
        first = _written[journal] + 1
    else:  # a journal the run did not write (yet): it may start anywhere
        first = next(_fresh)
    first = min(first, SEQ_NR_MAX - len(events) + 1)
    for offset, event in enumerate(body["events"]):
        event["seqNr"] = first + offset
    return body


def _existing(parameters: dict[str, Any]) -> dict[str, Any]:
    parameters = dict(parameters)
    case = _draws.randrange(4) if next(_cases) else 0
    topic = parameters.get("topic")
    # The first case (the examples phase's) always goes to the test's own topic.
    if TOPIC and isinstance(topic, str) and _TOPIC_SHAPE.fullmatch(topic) and case % 4 != 3:
        # only a topic the schema accepts is replaced, so that a negative case stays negative
        parameters["topic"] = TOPIC
    id_ = parameters.get("id")
    if JOURNAL_ID and isinstance(id_, str) and 0 < len(id_) <= 1024 and case % 2:
        parameters["id"] = JOURNAL_ID
        offset = parameters.get("offset")
        if isinstance(offset, int) and offset >= 0 and case % 4 == 1:
            parameters["offset"] = 0
    return parameters


_pairs = itertools.count()


def _one_condition(headers: MutableMapping[str, Any] | None) -> None:
    """In place: a copy assigned to the case would carry the Authorization header that
    schemathesis applied to it, and its check that a request without one is refused would then
    send one after all."""
    if headers is None or "If-Match" not in headers or headers.get("If-None-Match") != "*":
        return
    del headers["If-Match" if next(_pairs) % 2 else "If-None-Match"]


@schemathesis.hook
def before_call(ctx: schemathesis.HookContext, case: schemathesis.Case[Any], kwargs: Any) -> None:
    """Every phase's request (examples, coverage, fuzzing) passes here just before it is sent."""
    # Assign only what changed: schemathesis re-judges the negative parts of an assigned container.
    expected: int | None = None
    headers = case.headers
    _one_condition(headers)
    if_match = headers.get("If-Match") if headers is not None else None
    if isinstance(if_match, str) and (match := _ENTITY_TAG.fullmatch(if_match)):
        expected = int(match[1])
    elif headers is not None and headers.get("If-None-Match") == "*":
        expected = 0
    if case.operation.path == _FEED:
        query = _feed_query(case.query, headers)
        if query != case.query:
            case.query = query
    if isinstance(case.path_parameters, dict):
        parameters = _existing(case.path_parameters)
        if parameters != case.path_parameters:
            case.path_parameters = parameters
    body = _increasing(case.body, expected, _journal(case.path_parameters))
    if body is not case.body:
        case.body = body


@schemathesis.hook
def after_call(
    ctx: schemathesis.HookContext, case: schemathesis.Case[Any], response: schemathesis.Response
) -> None:
    """Remember the seqNr an append left its journal at."""
    journal = _journal(case.path_parameters)
    if case.operation.method.upper() != "POST" or journal is None:
        return
    if response.status_code in (200, 201) and case.operation.path.endswith("/events"):
        seq_nr = response.json().get("seqNr")
        if isinstance(seq_nr, int):
            _written[journal] = max(_written.get(journal, 0), seq_nr)


@schemathesis.check
def ndjson_lines_conform(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case[Any]
) -> bool | None:
    """Every complete line of an NDJSON answer is one line model, or the final problem line
    (an outcomes answer's lines each hold an outcome or a problem: its line model says so)."""
    content_type = (response.headers.get("content-type") or [""])[0]
    if not content_type.startswith("application/x-ndjson"):
        return None
    model = _LINE_MODELS[case.operation.path]
    per_line = case.operation.path in _PROBLEMS_PER_LINE
    lines = response.content.split(b"\n")
    complete = lines[:-1]  # the text after the last newline is empty, or cut short
    for number, line in enumerate(complete, start=1):
        document = json.loads(line)
        if "problem" in document and not per_line:
            Problem.model_validate(document["problem"])
            assert number == len(complete), f"line {number}: a problem line that is not the last"
        else:
            model.model_validate(document, strict=False)
    return True


@schemathesis.check
class EveryOperationSucceedsOnce:
    """Fail the run if an operation never answered 2xx: then it was never really exercised."""

    def __init__(self) -> None:
        self.tested: set[str] = set()
        self.succeeded: set[str] = set()

    def after_response(
        self,
        ctx: schemathesis.CheckContext,
        response: schemathesis.Response,
        case: schemathesis.Case[Any],
    ) -> None:
        label = case.operation.label
        self.tested.add(label)
        if 200 <= response.status_code < 300:
            self.succeeded.add(label)

    def after_run(self, ctx: schemathesis.CheckContext) -> None:
        never = sorted(self.tested - self.succeeded)
        assert not never, f"never answered 2xx: {', '.join(never)}"
