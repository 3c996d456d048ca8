"""Property-based, through the whole path: HTTP writer → Kafka → replication → Cassandra → HTTP
reader, on the real platform.

Each example is a fresh journal and a generated run of appends, deletes and purges: boundary
seqNrs (1, 2^63-1 and beyond), payloads of every JSON kind, nested up to and past the writer's
depth limit, wide, long, non-BMP, lone surrogates, text and binary, metadata and record headers up
to and past the record size limit, expireAfter at both ends. Every answer is a 2xx or a 4xx
problem, never a 5xx; what was acknowledged is exactly what the reader returns, while it is only
in Kafka and again once replicated, line for line.

Replication runs the replicator's core (`kjournal.replicate.replicate_partition`, through
`kjournal_dev.platform.replay.replicate`) with the real Cassandra store: a Spark micro-batch per example
would take most of a minute. tests/integration/spark checks that Spark applies the same function.

Known limits, left out here until they are fixed (see the report of issue 29): seqNrs of one
journal stay close together, since a journal with events at both 1 and 2^63-1 has ~10^14 segments
between them and reading it from Cassandra visits each; and a journal that starts far up (past
FAR) is never purged, since a purge that folds away such an append plans a delete of every
segment from the first (`kjournal.fold.plan.plan_purge`), ~10^14 of them.

`KJOURNAL_WHOLE_PATH_EXAMPLES` sets the number of examples (default 50, about 30 s); the seed is fixed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import httpx
import pytest
from cassandra.cluster import Session
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import event
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.model import SEQ_NR_MAX
from kjournal.model.expire_after import MAX_NANOS
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.replay import replicate
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics

from tests.integration.services.conftest import WriterStarter
from tests.integration.services.support import RunningService
from tests.integration.services.support import wait_for_topic
from tests.support.platform import unique_name

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

MAX = SEQ_NR_MAX
FAR = 1_000_000
MAX_DEPTH = 200  # the writer's largest KJOURNAL_HTTP__MAX_JSON_DEPTH
RECORD_BYTES = 300_000
EXAMPLES = int(os.environ.get("KJOURNAL_WHOLE_PATH_EXAMPLES", "50"))
PROBLEM = "application/problem+json"


# -- the platform ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def deep_writer(start_writer: WriterStarter) -> RunningService:
    """A writer at its most permissive depth, with room for records of a few hundred kB."""
    return start_writer(
        {
            "KJOURNAL_HTTP__MAX_JSON_DEPTH": str(MAX_DEPTH),
            "KJOURNAL_KAFKA__MAX_RECORD_BYTES": str(RECORD_BYTES),
        },
    )


@pytest.fixture(scope="module")
def path_topic(platform: Endpoints) -> Iterator[str]:
    name = unique_name("journal_p")
    asyncio.run(create_topic(platform.kafka_bootstrap, name, 1))
    yield wait_for_topic(platform.kafka_bootstrap, name)
    asyncio.run(delete_topics(platform.kafka_bootstrap, [name]))


@dataclass
class WholePath:
    """The platform one example drives."""

    writer: httpx.Client
    reader: httpx.Client
    topic: str
    bootstrap: str
    store: CassandraReplicatedStore

    def replicate(self) -> None:
        asyncio.run(replicate(self.bootstrap, self.topic, 0, self.store))


@pytest.fixture(scope="module")
def whole_path(
    platform: Endpoints,
    deep_writer: RunningService,
    reader: RunningService,
    services_keyspace: str,
    path_topic: str,
    kj_session: Session,
) -> Iterator[WholePath]:
    store = CassandraReplicatedStore(kj_session, TableNames(keyspace=services_keyspace))
    with (
        httpx.Client(base_url=deep_writer.url, timeout=60) as writer,
        httpx.Client(base_url=reader.url, timeout=60) as reader_client,
    ):
        yield WholePath(writer, reader_client, path_topic, platform.kafka_bootstrap, store)


# -- what is generated ------------------------------------------------------------------------

EDGE_INTEGERS = [0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64]
texts = st.text(max_size=20) | st.sampled_from(["", "😀𝄞", "\x00\x7f\u2028", "\ud800", '"\\'])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from(EDGE_INTEGERS)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int, kind: str) -> Any:
    value: Any = "core"
    for _ in range(depth):
        value = [value] if kind == "array" else {"k": value}
    return value


# A payload's own depth; the body adds 3 levels ({"events": [{"payload": ...}]}).
deep = st.builds(
    _nested,
    st.sampled_from([MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2, 300]) | st.integers(1, 250),
    st.sampled_from(["array", "object"]),
)
wide = st.builds(lambda n: list(range(n)), st.integers(500, 5000)) | st.builds(
    lambda n: {f"k{i}": i for i in range(n)}, st.integers(500, 3000)
)
long_text = st.builds(
    lambda piece, count: piece * count,
    st.sampled_from(["x", "é", "€", "😀", "a😀b"]),
    st.sampled_from([1000, 50_000, RECORD_BYTES // 4, RECORD_BYTES]),
)


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    """The payload members of one event (none, json, text or binary)."""
    kind = draw(st.sampled_from(["none", "json", "json", "typed json", "text", "binary"]))
    if kind == "none":
        return {}
    if kind == "text":
        return {"payloadType": "text", "payload": draw(texts | long_text)}
    if kind == "binary":
        data = draw(st.binary(max_size=3000))
        return {"payloadType": "binary", "payload": base64.b64encode(data).decode()}
    value = draw(json_values | deep | wide | long_text)
    return {"payload": value} if kind == "json" else {"payloadType": "json", "payload": value}


expire_afters = st.sampled_from(
    [1, MAX_NANOS // 1_000_000, MAX_NANOS // 1_000_000 + 1, 0, "1 day", "99999 days", "1 ms"]
)
header_names = st.sampled_from(["h", "x-trace", "journal.action", "é", ""]) | st.text(max_size=8)


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    """An append's members besides its events: metadata, expireAfter, headers (each optional)."""
    body: dict[str, Any] = {}
    if draw(st.booleans()):
        body["metadata"] = {"header": draw(json_values), "payload": draw(json_values | deep)}
    if draw(st.booleans()):
        body["expireAfter"] = draw(expire_afters)
    if draw(st.booleans()):
        body["headers"] = draw(
            st.dictionaries(header_names, texts | long_text, max_size=3)
            | st.builds(lambda n: {f"h{i}": "v" * 100 for i in range(n)}, st.integers(1, 1000))
        )
    return body


@dataclass(frozen=True)
class Append:
    gaps: tuple[int, ...]  # seqNr steps from the journal's last (the first: from its start)
    events: tuple[dict[str, Any], ...]  # payload members and tags
    envelope: dict[str, Any]


@dataclass(frozen=True)
class Broken:
    """An append no writer may accept: the answer must be a 4xx and nothing written."""

    body: Any


@dataclass(frozen=True)
class Delete:
    to: int  # relative to the journal's last seqNr when `relative`
    relative: bool


@dataclass(frozen=True)
class Purge:
    pass


Op = Append | Broken | Delete | Purge


@st.composite
def appends(draw: st.DrawFn) -> Append:
    count = draw(st.integers(1, 3))
    gaps = tuple(draw(st.lists(st.integers(1, 3), min_size=count, max_size=count)))
    events = tuple(
        {**draw(payloads()), "tags": draw(st.lists(texts, max_size=2))} for _ in range(count)
    )
    return Append(gaps, events, draw(envelopes()))


broken = st.sampled_from(
    [
        {"events": [{"seqNr": 0}]},
        {"events": [{"seqNr": MAX + 1}]},
        {"events": [{"seqNr": 2}, {"seqNr": 2}]},
        {"events": [{"seqNr": 3}, {"seqNr": 1}]},
        {"events": []},
        {"events": [{"seqNr": "1"}]},
        {"events": [{"seqNr": 1.5}]},
        {"events": [{"seqNr": 1, "payloadType": "json", "payload": None}]},
        {"events": [{"seqNr": 1, "payloadType": "binary", "payload": "not base64!"}]},
        {"events": [{"seqNr": 1, "payload": _nested(MAX_DEPTH, "array")}]},
        {"events": [{"seqNr": 1}], "expireAfter": -5},
        {"events": [{"seqNr": 1}], "unknown": 1},
        [{"seqNr": 1}],
    ]
).map(Broken)
deletes = st.builds(
    Delete,
    st.sampled_from([1, MAX, MAX + 1, 0]) | st.integers(1, MAX),
    st.just(False),
) | st.builds(Delete, st.integers(-2, 2), st.just(True))
operations = st.lists(
    st.one_of(appends(), appends(), broken, deletes, st.just(Purge())), min_size=1, max_size=5
)
starts = st.sampled_from([1, 2, 10_000, MAX - 20, MAX - 2]) | st.integers(1, MAX)


# -- the model ------------------------------------------------------------------------------


@dataclass
class Journal:
    """What the acknowledged operations leave: events above delete_to, the last seqNr."""

    events: dict[int, dict[str, Any]] = field(default_factory=dict)
    last: int | None = None
    delete_to: int = 0

    def visible(self) -> list[dict[str, Any]]:
        return [self.events[n] for n in sorted(self.events) if n > self.delete_to]


def _expected_line(seq_nr: int, event: dict[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    """The parts of a read line the append decides."""
    has_payload = event.get("payload") is not None  # a null payload is no payload
    metadata = envelope.get("metadata") or {}
    return {
        "seqNr": seq_nr,
        "tags": sorted(set(event["tags"])),
        "payloadType": event.get("payloadType", "json") if has_payload else None,
        "payload": event.get("payload"),
        "metadata": {"header": metadata.get("header"), "payload": metadata.get("payload")},
        "headers": envelope.get("headers") or {},
    }


def _decided(line: dict[str, Any]) -> dict[str, Any]:
    return {
        name: line[name]
        for name in ("seqNr", "tags", "payloadType", "payload", "metadata", "headers")
    }


def _shown(ops: list[Op]) -> str:
    return "; ".join(repr(op)[:300] for op in ops)


# -- the run --------------------------------------------------------------------------------


def _body(data: Any) -> bytes:
    # ensure_ascii: a lone surrogate travels as its escape, as a hostile client would send it
    return json.dumps(data, ensure_ascii=True).encode()


def _answered(response: httpx.Response, what: str) -> bool:
    """True for a 2xx; a 4xx must be a problem; anything else fails the test."""
    assert response.status_code < 500, f"{what}: {response.status_code} {response.text[:500]}"
    event(f"{what.split()[0]}: {response.status_code} {response.json().get('type', '')}")
    if response.status_code < 300:
        return True
    assert 400 <= response.status_code < 500, f"{what}: {response.status_code}"
    assert response.headers["content-type"].startswith(PROBLEM), response.text[:500]
    assert response.json()["type"].startswith("urn:kjournal:problem:"), response.text[:500]
    return False


def _apply(path: WholePath, url: str, journal: Journal, op: Op, start: int) -> None:
    if isinstance(op, Append):
        seq_nrs: list[int] = []
        at = start - 1 if journal.last is None else journal.last
        for gap in op.gaps:
            at += gap if seq_nrs or journal.last is not None else 1
            seq_nrs.append(at)
        data = {
            **op.envelope,
            "events": [{"seqNr": n, **event} for n, event in zip(seq_nrs, op.events, strict=True)],
        }
        response = path.writer.post(url + "/events", content=_body(data), headers=_JSON)
        accepted = _answered(response, "append")
        if seq_nrs[-1] > MAX:
            assert not accepted, "an append past 2^63-1 was accepted"
        elif accepted:
            if journal.last is None:
                journal.delete_to = seq_nrs[0] - 1
            for seq_nr, event in zip(seq_nrs, op.events, strict=True):
                journal.events[seq_nr] = _expected_line(seq_nr, event, op.envelope)
            journal.last = seq_nrs[-1]
    elif isinstance(op, Broken):
        response = path.writer.post(url + "/events", content=_body(op.body), headers=_JSON)
        assert not _answered(response, f"broken append {str(op.body)[:200]}")
    elif isinstance(op, Delete):
        to = op.to + (journal.last or 1) if op.relative else op.to
        response = path.writer.delete(url + "/events", params={"to": str(to)})
        accepted = _answered(response, f"delete to {to}")
        assert accepted == (1 <= to <= MAX), response.text[:500]
        if accepted and journal.last is not None:
            journal.delete_to = max(journal.delete_to, min(to, journal.last))
    else:
        assert _answered(path.writer.delete(url), "purge")
        journal.events.clear()
        journal.last = None
        journal.delete_to = 0


_JSON = {"content-type": "application/json"}


def _read(path: WholePath, url: str, journal: Journal, when: str) -> list[dict[str, Any]]:
    response = path.reader.get(url + "/events")
    pointer = path.reader.get(url + "/pointer")
    assert response.status_code == 200, f"{when}: {response.status_code} {response.text[:300]}"
    # Lines end in "\n" only: str.splitlines would also split at U+2028 inside a payload.
    lines = [json.loads(line) for line in response.text.split("\n") if line]
    assert all("problem" not in line for line in lines), f"{when}: {lines[-1]}"
    assert [_decided(line) for line in lines] == journal.visible(), when
    if journal.last is None:  # never appended to, or purged: no events, no pointer
        assert pointer.status_code == 404, f"{when}: {pointer.text[:300]}"
    else:
        assert pointer.status_code == 200, f"{when}: {pointer.text[:300]}"
        assert pointer.json()["seqNr"] == journal.last, when
    return lines


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    # No shrinking: replaying examples of megabyte bodies against the platform takes minutes;
    # the failing example is printed whole (note) instead.
    phases=[Phase.explicit, Phase.generate],
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
@given(start=starts, ops=operations)
def test_acknowledged_is_read_back_identical_before_and_after_replication(
    whole_path: WholePath, start: int, ops: list[Op]
) -> None:
    url = f"/v1/journals/{whole_path.topic}/{uuid.uuid4().hex}"
    journal = Journal()
    if start > FAR:  # see the module's docstring: a purge there would stall replication
        ops = [op for op in ops if not isinstance(op, Purge)]
    note(f"start {start}: {_shown(ops)}")
    for op in ops:
        _apply(whole_path, url, journal, op, start)
    in_kafka = _read(whole_path, url, journal, "only in Kafka")
    whole_path.replicate()
    assert _read(whole_path, url, journal, "replicated") == in_kafka
