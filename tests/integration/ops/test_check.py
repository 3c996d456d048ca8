"""The check and its repair on the real platform.

One replicated topic is damaged by hand in Cassandra (event rows deleted, a payload changed, a
head dropped, a deleteTo moved, the events of a dropped append inserted, pointer2 moved back);
another stays clean while appends go on. One run of the check as a Spark job (local[2], the
replicator's Kafka source) checks both: it names every damage and nothing on the clean topic. The
repair (in process) restores the damaged topic: reads return what they returned before the
damage, and the check finds it clean.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest
from cassandra.cluster import Session
from kjournal.cassandra.segments import metajournal_bucket
from kjournal.cassandra.settings import TableNames
from kjournal.cassandra.snapshot import CassandraSnapshotReader
from kjournal.cassandra.writer import CassandraReplicatedStore
from kjournal.fold.plan import InsertRows
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.wire.partitioner import partition_for
from kjournal.wire.record import timestamp_from_ms
from kjournal.wire.record import timestamp_to_ms
from kjournal_replicator.check.job import CheckOptions
from kjournal_replicator.check.job import run_check
from kjournal_replicator.check.kafka import KafkaLog
from kjournal_replicator.check.recheck import Confirmed
from kjournal_replicator.check.recheck import recheck_journals
from kjournal_replicator.check.repair import CHANGED
from kjournal_replicator.check.repair import repair_journal
from kjournal_replicator.settings import ReplicatorSettings

from tests.integration.spark.support import PARTITIONS
from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import caught_up
from tests.integration.spark.support import pointers
from tests.integration.spark.support import stored_events
from tests.integration.spark.support import wait_until
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(900)]

SETTLE_S = "6"
STILL = 4  # the clean topic's journals that no append moves during the check
DAMAGED = ("missing-rows", "changed", "no-head", "delete-to", "dropped")
CLEAN = ("clean-1", "clean-2", "deleted", "purged", "pointer")


def _events(first: int, count: int, **extra: object) -> list[Event]:
    return [
        Event(SeqNr(n), payload=JsonPayload({"n": n, **extra}))  # type: ignore[dict-item]
        for n in range(first, first + count)
    ]


@dataclass
class Damaged:
    topic: str
    clean_topic: str
    before: dict[str, list[Event]]
    pointer_partition: int
    pointer2: int  # before it was moved back
    appended_during_check: int
    exit_code: int
    report: dict[str, Any]
    table: str
    log: str
    seconds: float
    ids: list[str] = field(default_factory=list)


def _settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> ReplicatorSettings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return ReplicatorSettings()


async def _write_history(bootstrap: str, topic: str) -> dict[str, Any]:
    async with Journals(KafkaSettings(bootstrap_servers=bootstrap)) as journals:

        def j(id: str) -> Any:
            return journals.journal(Key(topic, id))

        await j("missing-rows").produce(_events(1, 6))
        await j("changed").produce(_events(1, 3))
        await j("no-head").produce(_events(1, 2))
        await j("delete-to").produce(_events(1, 5))
        await j("dropped").produce(_events(1, 3))
        dropped = await j("dropped").produce(_events(2, 2, other=True))  # a conflict: dropped
        await j("clean-1").produce(_events(1, 4))
        await j("clean-2").produce(_events(1, 1))
        await j("deleted").produce(_events(1, 5))
        await j("deleted").delete(3)
        await j("purged").produce(_events(1, 2))
        await j("purged").purge()
        for first in (1, 3, 5):
            await j("pointer").produce(_events(first, 2))
        return {"dropped": dropped}


def _damage(session: Session, keyspace: str, topic: str, dropped: Any) -> None:
    ks = keyspace

    def bucket(id: str) -> int:
        return metajournal_bucket(id, 10_000)

    session.execute(
        f"DELETE FROM {ks}.journal WHERE id = %s AND topic = %s AND segment = 0 "
        "AND seq_nr >= 3 AND seq_nr <= 4",
        ("missing-rows", topic),
    )
    (row,) = session.execute(
        f"SELECT timestamp FROM {ks}.journal WHERE id = %s AND topic = %s AND segment = 0 "
        "AND seq_nr = 2",
        ("changed", topic),
    ).all()
    session.execute(
        f"UPDATE {ks}.journal SET payload_txt = '{{\"n\": 999}}' WHERE id = %s AND topic = %s "
        "AND segment = 0 AND seq_nr = 2 AND timestamp = %s",
        ("changed", topic, row[0]),
    )
    session.execute(
        f"DELETE FROM {ks}.metajournal WHERE topic = %s AND segment = %s AND id = %s",
        (topic, bucket("no-head"), "no-head"),
    )
    session.execute(
        f"UPDATE {ks}.metajournal SET delete_to = 2 WHERE topic = %s AND segment = %s AND id = %s",
        (topic, bucket("delete-to"), "delete-to"),
    )
    # The dropped append's events, stored as a replicator that does not know the rule stores them.
    store = CassandraReplicatedStore(session, TableNames(keyspace=keyspace))
    key = Key(topic, "dropped")
    head = store.heads([key])[0]
    assert head is not None
    at = timestamp_from_ms(timestamp_to_ms(dropped.timestamp))
    rows = tuple(
        EventRecord(event, at, dropped.partition_offset) for event in _events(2, 2, other=True)
    )
    assert store.write([(key, [(InsertRows(0, rows, head.record_id),)])]) == [None]


class Appender:
    """Appends to the clean topic's journals from a thread of its own, until stopped."""

    JOURNALS = 6

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.appended = 0
        self.seq = dict.fromkeys(range(self.JOURNALS), 0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def once(self, journals: Journals) -> None:
        for n in self.seq:
            await journals.journal(Key(self.topic, f"live-{n}")).produce(
                _events(self.seq[n] + 1, 2)
            )
            self.seq[n] += 2
            self.appended += 1

    async def first(self) -> None:
        """The live journals' first events, and journals nobody appends to while the check runs."""
        async with Journals(KafkaSettings(bootstrap_servers=self.bootstrap)) as journals:
            await self.once(journals)
            for n in range(STILL):
                await journals.journal(Key(self.topic, f"still-{n}")).produce(_events(1, 3))

    async def _run(self) -> None:
        async with Journals(KafkaSettings(bootstrap_servers=self.bootstrap)) as journals:
            while not self.stop.is_set():
                await self.once(journals)
                await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def damaged(
    replicator: ReplicatorProcess,
    new_topic: Callable[[], str],
    kafka_bootstrap: str,
    session: Session,
    ops_keyspace: str,
    ops_env: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Damaged:
    topic, clean_topic = new_topic(), new_topic()
    written = asyncio.run(_write_history(kafka_bootstrap, topic))
    appender = Appender(kafka_bootstrap, clean_topic)
    asyncio.run(appender.first())
    for name in (topic, clean_topic):
        wait_until(
            caught_up(kafka_bootstrap, session, ops_keyspace, name), 240, "replication", replicator
        )
    appender.thread.start()  # appends go on from here until the check has ended
    try:
        ids = [*DAMAGED, *CLEAN]
        before = asyncio.run(stored_events(session, ops_keyspace, topic, ids))
        partition = partition_for(b"pointer", PARTITIONS)
        pointer2 = pointers(session, ops_keyspace, topic)[partition]
        assert pointer2 is not None
        assert pointer2 >= 2
        _damage(session, ops_keyspace, topic, written["dropped"])
        session.execute(
            f"UPDATE {ops_keyspace}.pointer2 SET offset = %s WHERE topic = %s AND partition = %s",
            (pointer2 - 2, topic, partition),
        )

        folder = tmp_path_factory.mktemp("check")
        report_file = folder / "report.json"
        appended_before = appender.appended
        started = time.perf_counter()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "kjournal_replicator.check",
                topic,
                clean_topic,
                "--settle-s",
                SETTLE_S,
                "--json-file",
                str(report_file),
            ],
            env=ops_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        seconds = time.perf_counter() - started
        appended = appender.appended - appended_before
    finally:
        appender.stop.set()
        appender.thread.join(30)
    assert report_file.exists(), result.stderr[-4000:]
    reports = {r["topic"]: r for r in json.loads(report_file.read_text())}
    return Damaged(
        topic,
        clean_topic,
        before,
        partition,
        pointer2,
        appended,
        result.returncode,
        reports,
        result.stdout,
        result.stderr,
        seconds,
        ids,
    )


def test_the_check_names_every_damage(damaged: Damaged, pytestconfig: pytest.Config) -> None:
    add_session_report(
        pytestconfig,
        f"kjournal check (Spark, local[2]) of a damaged topic, {damaged.seconds:.1f} s",
        damaged.table,
    )
    assert damaged.exit_code == 1, damaged.log[-4000:]
    report = damaged.report[damaged.topic]
    assert report["mode"] == "spark"
    found = {d["id"]: {f["kind"] for f in d["findings"]} for d in report["differences"]}
    assert found == {
        "missing-rows": {"events-missing"},
        "changed": {"events-changed"},
        "no-head": {"head-missing"},
        "delete-to": {"head-delete-to"},
        "dropped": {"events-of-dropped-append"},
    }, report
    assert [(p["partition"], p["kind"]) for p in report["pointer2"]] == [
        (damaged.pointer_partition, "pointer2-behind")
    ]
    details = {d["id"]: d["findings"][0]["detail"] for d in report["differences"]}
    assert "seqNrs 3..4" in details["missing-rows"]
    assert "seqNr 2: payload" in details["changed"]
    assert "deleteTo 2, the fold's none" in details["delete-to"]
    assert "seqNrs 2..3" in details["dropped"]
    assert report["unchecked"] == []
    assert report["journals"] == len(damaged.ids)


def test_a_clean_topic_checks_clean_while_appends_go_on(damaged: Damaged) -> None:
    report = damaged.report[damaged.clean_topic]
    assert damaged.appended_during_check > 0
    assert report["differences"] == []
    assert report["pointer2"] == []
    assert report["journals"] == Appender.JOURNALS + STILL
    # A journal appended to throughout may not hold still long enough to be compared, or its
    # newest records may wait longer than the settle time while the check's own Spark job takes
    # the cores: it is listed, never reported as different.
    assert {u["reason"] for u in report["unchecked"]} <= {"changing", "not-replicated"}
    assert not [u for u in report["unchecked"] if u["id"].startswith("still-")]


def test_repair_restores_the_damaged_topic(
    damaged: Damaged,
    session: Session,
    ops_keyspace: str,
    ops_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    pytestconfig: pytest.Config,
) -> None:
    settings = _settings(ops_env, monkeypatch)
    options = CheckOptions([damaged.topic], local=True, repair=True, settle_s=float(SETTLE_S))
    (repaired,) = run_check(settings, options)
    add_session_report(pytestconfig, "kjournal check --local --repair", repaired.table())
    assert {r.key.id for r in repaired.differing} == set(DAMAGED)
    assert repaired.repaired == dict.fromkeys(DAMAGED, "repaired")
    assert repaired.clean_after_repair
    assert pointers(session, ops_keyspace, damaged.topic)[damaged.pointer_partition] == (
        damaged.pointer2
    )

    after = asyncio.run(stored_events(session, ops_keyspace, damaged.topic, damaged.ids))
    assert after == damaged.before

    (again,) = run_check(settings, CheckOptions([damaged.topic], local=True, settle_s=5.0))
    assert not again.differs, again.table()
    assert again.journals == len(damaged.ids)


def test_repair_never_touches_a_journal_that_changed_in_kafka_meanwhile(
    damaged: Damaged,
    replicator: ReplicatorProcess,
    kafka_bootstrap: str,
    session: Session,
    ops_keyspace: str,
    ops_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A journal confirmed different at one end offset, then appended to before the repair
    writes: the repair leaves it (it differs from a fold that is no longer Kafka's) and compares
    it again at the new end, where it repairs it."""
    settings = _settings(ops_env, monkeypatch)
    topic, key = damaged.topic, Key(damaged.topic, "clean-1")
    partition = partition_for(key.id.encode(), PARTITIONS)
    session.execute(
        f"DELETE FROM {ops_keyspace}.journal WHERE id = %s AND topic = %s AND segment = 0 "
        "AND seq_nr = 2",
        (key.id, topic),
    )
    cassandra = settings.cassandra
    store = CassandraReplicatedStore(session, cassandra.names)
    snapshot = CassandraSnapshotReader(session, cassandra.names)

    async def confirm_append_repair() -> tuple[Confirmed, str]:
        async with KafkaLog(settings.kafka) as kafka:
            outcome = await recheck_journals(
                topic,
                partition,
                0,
                [key.id],
                snapshot,
                kafka,
                horizon=None,
                segment_size=cassandra.segment_size,
                expiry_zone=cassandra.expiry_zone,
                settle_s=float(SETTLE_S),
            )
            confirmed = outcome[key.id]
            assert isinstance(confirmed, Confirmed)
            async with Journals(KafkaSettings(bootstrap_servers=kafka_bootstrap)) as journals:
                await journals.journal(key).produce(_events(5, 1))
            status = await repair_journal(
                confirmed,
                store,
                snapshot,
                kafka,
                segment_size=cassandra.segment_size,
                expiry_zone=cassandra.expiry_zone,
            )
            return confirmed, status

    confirmed, status = asyncio.run(confirm_append_repair())
    assert [f.kind.value for f in confirmed.result.findings] == ["events-missing"]
    assert status == CHANGED
    wait_until(
        caught_up(kafka_bootstrap, session, ops_keyspace, topic), 240, "replication", replicator
    )
    rows = session.execute(
        f"SELECT seq_nr FROM {ops_keyspace}.journal WHERE id = %s AND topic = %s AND segment = 0",
        (key.id, topic),
    ).all()
    assert [row[0] for row in rows] == [1, 3, 4, 5]  # untouched by the repair: 2 still missing

    (again,) = run_check(settings, CheckOptions([topic], local=True, repair=True, settle_s=5.0))
    assert again.repaired == {"clean-1": "repaired"}
    events = asyncio.run(stored_events(session, ops_keyspace, topic, [key.id]))
    assert [e.seq_nr for e in events[key.id]] == [1, 2, 3, 4, 5]
