"""Faults under load: nothing acknowledged is lost, doubled or reordered, and no journal becomes
unreadable, whatever dies or stalls.

Each scenario runs the load (tests/faults/load.py) on fresh journals, does its fault halfway,
lets the load go on, then reads every journal right away and again once the replicator has
caught up (tests/faults/invariants.py counts both). Its row of the table printed at the end of
the session must be zeros in the missing, duplicated, out-of-order, wrong-payload, unreadable
and before≠after columns. Each scenario is bounded in time: `SCENARIO_LIMIT_S`, and a load that
gives up on an append `LOAD_GIVE_UP_S` after it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest
from kjournal.client import AsyncClient
from kjournal.client import RetryPolicy
from kjournal.errors import AppendConflict
from kjournal.errors import KJournalError
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import JsonValue
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal_dev.platform.topics import delete_topics

from tests.faults.follower import FeedFollower
from tests.faults.invariants import ReadEvents
from tests.faults.invariants import Reads
from tests.faults.invariants import Tally
from tests.faults.invariants import tally
from tests.faults.load import ChurnLoad
from tests.faults.load import CountingTransport
from tests.faults.load import JournalLoad
from tests.faults.load import Ledger
from tests.faults.load import payload_of
from tests.faults.platform import CASSANDRA
from tests.faults.platform import DOOMED_TOPIC
from tests.faults.platform import KAFKA
from tests.faults.platform import READER
from tests.faults.platform import REPLICATOR
from tests.faults.platform import TOPIC
from tests.faults.platform import WRITER
from tests.faults.platform import FaultPlatform

SCENARIO_LIMIT_S = 420.0
pytestmark = [
    pytest.mark.faults,
    pytest.mark.kafka,
    pytest.mark.cassandra,
    pytest.mark.spark,
    pytest.mark.timeout(SCENARIO_LIMIT_S + 60),
]

LOAD_GIVE_UP_S = 240.0
REPLICATION_LIMIT_S = 240.0
JOURNALS = 8
READS = RetryPolicy(budget_s=120.0)  # the checker's reads wait out any recovery still going on
FOLLOW_LIMIT_S = 120.0  # after replication caught up, for the feed to deliver the rest
CHURNED = 4  # journals with deletes and purges in the followed scenario

Fault = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


def _scenario(
    fp: FaultPlatform,
    tallies: list[Tally],
    name: str,
    fault: Fault,
    *,
    recover: Fault = _nothing,
    warmup_s: float = 6.0,
    after_s: float = 6.0,
    resend_every: int = 0,
    overlap_every: int = 0,
    topics: tuple[str, ...] = (TOPIC,),
    checked_topics: tuple[str, ...] = (TOPIC,),
    follower: FeedFollower | None = None,
    churn: tuple[ChurnLoad, ...] = (),
) -> tuple[Ledger, list[Key]]:
    """Load, fault, load, read, `recover`, wait for replication, read: the scenario's tally,
    appended to the table, then asserted clean; its ledger and journals, for the caller's own
    checks. `churn` journals (appends, deletes, purges) take the same load's deadline and faults;
    the caller checks them. A `follower` follows the scenario's journals on the topic feed from
    before the load until it has every acknowledged event and every churned journal's
    acknowledged timeline (or FOLLOW_LIMIT_S passed): the caller checks what it got."""

    async def run() -> tuple[Tally, Ledger, list[Key]]:
        async with contextlib.AsyncExitStack() as stack:
            if follower is not None:
                await stack.enter_async_context(follower)
            outcome = await load_and_check()
            if follower is not None:
                acknowledged = outcome[1].acknowledged

                def complete() -> bool:
                    return follower.has(acknowledged) and all(
                        len(follower.timeline(c.key.id)) >= len(c.timeline()) for c in churn
                    )

                await follower.wait_until(complete, FOLLOW_LIMIT_S)
            return outcome

    async def load_and_check() -> tuple[Tally, Ledger, list[Key]]:
        ledger = Ledger()
        restarts = fp.all_restarts()
        slug = name.replace(" ", "-")
        keys = [Key(topic, f"{slug}-{n}") for topic in topics for n in range(JOURNALS)]
        give_up_at = time.monotonic() + LOAD_GIVE_UP_S
        transport = CountingTransport(ledger.errors)
        async with AsyncClient(fp.url(WRITER), fp.url(READER), transport=transport) as client:
            stop = asyncio.Event()
            loads = [
                JournalLoad(
                    client,
                    key,
                    ledger,
                    give_up_at,
                    pause_s=0.1,
                    resend_every=resend_every,
                    overlap_every=overlap_every,
                )
                for key in keys
            ]
            tasks = [asyncio.create_task(load.run(stop)) for load in loads]
            tasks += [asyncio.create_task(c.run(client, ledger, give_up_at, stop)) for c in churn]
            await asyncio.sleep(warmup_s)
            await fault()
            await asyncio.sleep(after_s)
            stop.set()
            await asyncio.gather(*tasks)
        checked = [key for key in keys if key.topic in checked_topics]
        before = await read_journals(fp, checked)
        await recover()
        await wait_replicated(fp, checked_topics)
        after = await read_journals(fp, checked)
        acknowledged = {key: ledger.acknowledged.get(key, {}) for key in checked}
        unacknowledged = sum(len(ledger.unacknowledged.get(key, ())) for key in checked)
        result = tally(name, acknowledged, before, after, ledger.errors, unacknowledged)
        result.restarted = _restarted(restarts, fp.all_restarts())
        tallies.append(result)
        return result, ledger, keys

    async def bounded() -> tuple[Tally, Ledger, list[Key]]:
        async with asyncio.timeout(SCENARIO_LIMIT_S):
            return await run()

    result, ledger, keys = asyncio.run(bounded())
    _assert_clean(result)
    return ledger, keys


def _restarted(before: dict[str, int], after: dict[str, int]) -> str:
    return ", ".join(
        f"{name}×{count - before.get(name, 0)}"
        for name, count in after.items()
        if count > before.get(name, 0)
    )


async def read_journals(fp: FaultPlatform, keys: list[Key]) -> Reads:
    reads: dict[Key, ReadEvents | Exception] = {}
    async with AsyncClient(reader_url=fp.url(READER), retry=READS, timeout=30) as client:
        for key in keys:
            try:
                reads[key] = [
                    (int(r.event.seq_nr), _payload_value(r.event)) async for r in client.read(key)
                ]
            except KJournalError as exc:
                reads[key] = exc
    return reads


def _payload_value(event: Event) -> JsonValue:
    assert isinstance(event.payload, JsonPayload), event
    return event.payload.value


async def wait_replicated(fp: FaultPlatform, topics: tuple[str, ...]) -> None:
    """Until the replicator has every record of `topics` (lag 0), or fail with the lags."""
    deadline = time.monotonic() + REPLICATION_LIMIT_S
    lags: dict[str, int] = {}
    async with AsyncClient(reader_url=fp.url(READER), retry=READS, timeout=30) as client:
        while time.monotonic() < deadline:
            lags = {topic: (await client.replication(topic)).lag for topic in topics}
            if not any(lags.values()):
                return
            await asyncio.sleep(1.0)
    tail = "\n".join(fp.log(REPLICATOR).read_text(errors="replace").splitlines()[-30:])
    raise AssertionError(f"replication did not catch up in {REPLICATION_LIMIT_S} s: {lags}\n{tail}")


async def wait_replicating(fp: FaultPlatform, topic: str) -> None:
    """Until the replicator has applied records of every partition of `topic` that has any."""
    deadline = time.monotonic() + REPLICATION_LIMIT_S
    async with AsyncClient(reader_url=fp.url(READER), retry=READS, timeout=30) as client:
        while time.monotonic() < deadline:
            partitions = (await client.replication(topic)).partitions
            written = [p for p in partitions if p.end_offset > p.beginning_offset]
            if written and all(p.pointer2 is not None for p in written):
                return
            await asyncio.sleep(0.5)
    raise AssertionError(f"the replicator did not start on {topic} in {REPLICATION_LIMIT_S} s")


def kill(fp: FaultPlatform, name: str, *, forget_checkpoint: bool = False) -> Fault:
    async def fault() -> None:
        await asyncio.to_thread(fp.kill, name)
        if forget_checkpoint:
            fp.forget_checkpoint()

    return fault


def restart(fp: FaultPlatform) -> Fault:
    async def recover() -> None:
        await asyncio.to_thread(fp.restart)

    return recover


def kill_and_restart(fp: FaultPlatform, name: str, down_s: float) -> Fault:
    async def fault() -> None:
        await kill(fp, name)()
        await asyncio.sleep(down_s)
        await restart(fp)()

    return fault


def _killed_and_restarted(
    fp: FaultPlatform, tallies: list[Tally], label: str, name: str, down_s: float
) -> None:
    """The scenario "<label> SIGKILL + restart": component `name` killed mid-load and restarted
    `down_s` later, which must be its one restart."""
    restarts = fp.restarts(name)
    _scenario(fp, tallies, f"{label} SIGKILL + restart", kill_and_restart(fp, name, down_s))
    assert fp.restarts(name) == restarts + 1


def _assert_clean(result: Tally) -> None:
    assert result.acknowledged > 0, "the load acknowledged nothing"
    assert result.clean, result


# --- scenarios, in the order they run (the topic deletion last: it leaves a topic gone) -------


def test_duplicate_and_overlapping_appends(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    _, keys = _scenario(
        faults_platform,
        tallies,
        "duplicate and overlapping appends",
        _nothing,
        resend_every=2,
        overlap_every=3,
    )

    async def conflicting_resend() -> None:
        async with AsyncClient(faults_platform.url(WRITER), faults_platform.url(READER)) as client:
            key = keys[0]
            other = Event(SeqNr(1), payload=JsonPayload({"not": "the first copy"}))
            with pytest.raises(AppendConflict):  # in Kafka, dropped: never read
                await client.append(key, [other])
            # The same on a journal of its own, whose only conflict it is: a status shows a
            # journal's first 20 conflicts by offset, and the load's overlapping appends (dropped
            # whole, conflicts too) can fill them before the resend's.
            alone = Key(key.topic, f"{key.id}-resent")
            await client.append(alone, [Event(SeqNr(1), payload=JsonPayload(payload_of(alone, 1)))])
            with pytest.raises(AppendConflict):
                await client.append(alone, [other])
            await wait_replicated(faults_platform, (TOPIC,))
            status = await client.status(key)
            assert status is not None
            assert status.conflicts  # the load's overlapping appends
            first = [r async for r in client.read(key, to=1)]
            assert _payload_value(first[0].event) == payload_of(key, 1)
            status = await client.status(alone)
            assert status is not None
            assert [int(c.seq_nr) for c in status.conflicts or ()] == [1]
            first = [r async for r in client.read(alone, to=1)]
            assert _payload_value(first[0].event) == payload_of(alone, 1)

    asyncio.run(conflicting_resend())


def test_broker_killed_and_restarted(faults_platform: FaultPlatform, tallies: list[Tally]) -> None:
    kafka_home = Path(faults_platform.endpoints.data_dir) / KAFKA
    cluster_id = _cluster_id(kafka_home)
    log_size = faults_platform.log(KAFKA).stat().st_size
    _killed_and_restarted(faults_platform, tallies, "broker", KAFKA, down_s=5.0)
    assert _cluster_id(kafka_home) == cluster_id, "the broker's storage was formatted again"
    assert faults_platform.log(KAFKA).stat().st_size > log_size, "the broker's log was truncated"


def _cluster_id(kafka_home: Path) -> str:
    for line in (kafka_home / "data" / "meta.properties").read_text().splitlines():
        if line.startswith("cluster.id="):
            return line.split("=", 1)[1]
    raise AssertionError("no cluster.id in meta.properties")


def test_cassandra_frozen_for_30_s(faults_platform: FaultPlatform, tallies: list[Tally]) -> None:
    async def freeze() -> None:
        with faults_platform.frozen(CASSANDRA):
            await asyncio.sleep(30.0)
        await asyncio.to_thread(faults_platform.restart)  # a replicator that gave up comes back

    _scenario(faults_platform, tallies, "Cassandra SIGSTOP 30 s", freeze)


def test_cassandra_killed_and_restarted(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    _killed_and_restarted(faults_platform, tallies, "Cassandra", CASSANDRA, down_s=5.0)


def test_replicator_killed_and_restarted_from_its_checkpoint(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    # Read while the replicator is down (Cassandra's prefix and the Kafka tail), then restart it.
    _scenario(
        faults_platform,
        tallies,
        "replicator SIGKILL + restart",
        kill(faults_platform, REPLICATOR),
        recover=restart(faults_platform),
    )


def test_replicator_killed_and_restarted_without_its_checkpoint(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    _scenario(
        faults_platform,
        tallies,
        "replicator SIGKILL, checkpoint lost",
        kill(faults_platform, REPLICATOR, forget_checkpoint=True),
        recover=restart(faults_platform),
    )


def test_writer_killed_and_restarted(faults_platform: FaultPlatform, tallies: list[Tally]) -> None:
    _killed_and_restarted(faults_platform, tallies, "writer", WRITER, down_s=2.0)


def test_a_feed_follower_gets_every_acknowledged_event_and_control_in_place_through_broker_and_reader_kills(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    fp = faults_platform
    name = "followed, broker and reader SIGKILL"
    slug = name.replace(" ", "-")
    follower = FeedFollower(fp.url(READER), TOPIC, slug + "-", READS)
    churn = tuple(ChurnLoad(Key(TOPIC, f"{slug}-churn-{n}")) for n in range(CHURNED))

    async def broker_then_reader() -> None:
        await kill_and_restart(fp, KAFKA, down_s=5.0)()
        await asyncio.sleep(3.0)
        await kill_and_restart(fp, READER, down_s=2.0)()

    ledger, keys = _scenario(
        fp, tallies, name, broker_then_reader, resend_every=5, follower=follower, churn=churn
    )
    assert follower.failure is None, follower.failure
    assert follower.others == []

    appended = {key.id for key in keys}
    delivered = [(journal, seq_nr) for journal, seq_nr in follower.delivered if journal in appended]
    twice = [event for event, count in Counter(delivered).items() if count > 1]
    assert not twice, f"delivered twice: {twice[:10]}"
    last: dict[str, int] = {}
    for journal, seq_nr in delivered:
        assert seq_nr > last.get(journal, 0), f"{journal}: {seq_nr} after {last[journal]}"
        last[journal] = seq_nr
    acknowledged = {(k.id, s) for k, events in ledger.acknowledged.items() for s in events}
    sent = acknowledged | {
        (k.id, s) for k, seq_nrs in ledger.unacknowledged.items() for s in seq_nrs
    }
    missing = acknowledged - set(delivered)
    assert not missing, (
        f"{len(missing)} acknowledged events never delivered: {sorted(missing)[:10]}"
    )
    assert set(delivered) <= sent, sorted(set(delivered) - sent)[:10]

    # The churned journals: each one's events, deletes and purges delivered once, in the order
    # its writer had them acknowledged (a delete in place: after the events it covers, before
    # the next append), then at most the one operation left unanswered at the deadline.
    kinds = Counter(op.kind for c in churn for op in c.ops)
    assert kinds["delete"], f"the churn load sent no delete: {kinds}"
    assert kinds["purge"], f"the churn load sent no purge: {kinds}"
    for c in churn:
        expected, got = c.timeline(), follower.timeline(c.key.id)
        assert got[: len(expected)] == expected, _first_difference(c.key.id, expected, got)
        rest = got[len(expected) :]
        assert rest in ([], c.timeline([c.pending]) if c.pending else []), (c.key.id, rest)

    # ... and their reads, replication done, are what those operations leave.
    reads = asyncio.run(read_journals(fp, [c.key for c in churn]))
    for c in churn:
        possible = [c.expected_read()]
        if c.pending is not None:
            possible.append(c.expected_read([*c.ops, c.pending]))
        assert reads[c.key] in possible, (c.key.id, reads[c.key], possible[0])


def _first_difference(
    journal: str, expected: list[tuple[object, ...]], got: list[tuple[object, ...]]
) -> str:
    at = next((i for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g), None)
    if at is None:
        return f"{journal}: {len(got)} entries delivered of {len(expected)} acknowledged"
    return f"{journal}: entry {at} is {got[at]}, expected {expected[at]} (of {len(expected)})"


def test_reader_killed_mid_stream_and_the_client_resumes(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    fp = faults_platform
    key = Key(TOPIC, "reader-kill")
    total, batch, kill_at = 60_000, 500, 5_000

    async def run() -> Tally:
        ledger = Ledger()
        restarts = fp.all_restarts()
        async with AsyncClient(fp.url(WRITER), fp.url(READER)) as client:
            for first in range(1, total + 1, batch):
                events = [
                    Event(SeqNr(n), payload=JsonPayload(payload_of(key, n, pad=200)))
                    for n in range(first, first + batch)
                ]
                await client.append(key, events)
                ledger.acknowledge(key, events)
        streamed: ReadEvents = []
        transport = CountingTransport(ledger.errors)
        async with AsyncClient(reader_url=fp.url(READER), transport=transport) as client:
            restart: asyncio.Task[None] | None = None
            async with contextlib.aclosing(client.read(key)) as stream:
                async for record in stream:
                    streamed.append((int(record.event.seq_nr), _payload_value(record.event)))
                    if len(streamed) == kill_at:
                        await asyncio.to_thread(fp.kill, READER)
                        restart = asyncio.create_task(asyncio.to_thread(fp.restart))
            assert restart is not None
            await restart
        assert ledger.errors, "the stream was never cut: the kill came too late to test a resume"
        await wait_replicated(fp, (TOPIC,))
        after = await read_journals(fp, [key])
        result = tally(
            "reader SIGKILL mid-stream", ledger.acknowledged, {key: streamed}, after, ledger.errors
        )
        result.restarted = _restarted(restarts, fp.all_restarts())
        tallies.append(result)
        return result

    async def bounded() -> Tally:
        async with asyncio.timeout(SCENARIO_LIMIT_S):
            return await run()

    _assert_clean(asyncio.run(bounded()))


def test_a_topic_deleted_while_the_replicator_runs(
    faults_platform: FaultPlatform, tallies: list[Tally]
) -> None:
    fp = faults_platform
    restarts = fp.restarts(REPLICATOR)

    async def delete() -> None:
        # deleted while being replicated: the replicator has its partitions in hand (not lag 0,
        # which the load keeps writing past: waiting for it took minutes on a busy host)
        await wait_replicating(fp, DOOMED_TOPIC)
        await delete_topics(fp.config.kafka_bootstrap, [DOOMED_TOPIC])

    _scenario(
        fp,
        tallies,
        f"topic {DOOMED_TOPIC} deleted",
        delete,
        topics=(TOPIC, DOOMED_TOPIC),
        after_s=15.0,
    )
    assert fp.running(REPLICATOR), "the replicator died when a topic it replicated was deleted"
    assert fp.restarts(REPLICATOR) == restarts
    lines = fp.log(REPLICATOR).read_text(errors="replace").splitlines()
    deleted = [line for line in lines if DOOMED_TOPIC in line and "deleted" in line]
    assert len(deleted) == 1, deleted
