"""kjournal_eventsourcing's application recorder against the real writer, reader, Kafka and
Cassandra: the eventsourcing library's own suites (the application recorder's, with its
subscription test; non-interleaving notification ids; the infrastructure factory's; the example
application; a projection whose view is on SQLite), and what kjournal adds.

Each test gets a fresh single-partition topic and its snapshots topic. The writer here keeps
kjournal's default record size: the library's non-interleaving test appends 1,000 events at once.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from typing import ClassVar
from uuid import uuid4

import pytest
from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.persistence import InfrastructureFactory
from eventsourcing.persistence import InfrastructureFactoryError
from eventsourcing.persistence import IntegrityError
from eventsourcing.persistence import StoredEvent
from eventsourcing.persistence import Tracking
from eventsourcing.sqlite import SQLiteTrackingRecorder
from eventsourcing.tests import application as library_application
from eventsourcing.tests import projection as library_projection
from eventsourcing.tests.persistence import ApplicationRecorderTestCase
from eventsourcing.tests.persistence import InfrastructureFactoryTestCase
from eventsourcing.tests.persistence import NonInterleavingNotificationIDsBaseCase
from eventsourcing.utils import Environment
from kjournal.client import Client
from kjournal.model import Key
from kjournal_dev.platform.topics import create_topic
from kjournal_dev.platform.topics import delete_topics
from kjournal_eventsourcing import Factory
from kjournal_eventsourcing import KJournalAggregateRecorder
from kjournal_eventsourcing import KJournalApplicationRecorder
from kjournal_eventsourcing.notification_ids import IDS_PER_RECORD

from tests.integration.services.conftest import WriterStarter
from tests.integration.services.support import RunningService
from tests.integration.services.support import wait_for_topic
from tests.support.platform import unique_name

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


@pytest.fixture(scope="module")
def es_writer(start_writer: WriterStarter) -> RunningService:
    """A writer with kjournal's default limits (the session's writer has small test limits)."""
    return start_writer()


@pytest.fixture
def app_env(
    kafka_bootstrap: str, es_writer: RunningService, reader: RunningService
) -> Iterator[dict[str, str]]:
    """The environment of an application on a fresh one-partition topic (and its snapshots')."""
    topic = unique_name("journal_app")
    asyncio.run(create_topic(kafka_bootstrap, topic, 1))
    asyncio.run(create_topic(kafka_bootstrap, f"{topic}_snapshots", 1))
    wait_for_topic(kafka_bootstrap, topic)
    wait_for_topic(kafka_bootstrap, f"{topic}_snapshots")
    yield {
        "PERSISTENCE_MODULE": "kjournal_eventsourcing",
        "KJOURNAL_WRITER_URL": es_writer.url,
        "KJOURNAL_READER_URL": reader.url,
        "KJOURNAL_TOPIC": topic,
    }
    asyncio.run(delete_topics(kafka_bootstrap, [topic, f"{topic}_snapshots"]))


class _OnKJournal:
    """Each test's factory over `app_env`, closed after it."""

    env: Any
    factory: Factory

    @pytest.fixture(autouse=True)
    def _platform(self, app_env: dict[str, str]) -> Iterator[None]:
        self.env = Environment(env=app_env)
        with closing(InfrastructureFactory.construct(self.env)) as factory:
            assert isinstance(factory, Factory)
            self.factory = factory
            yield

    def create_recorder(self) -> KJournalApplicationRecorder:
        recorder = self.factory.application_recorder()
        assert isinstance(recorder, KJournalApplicationRecorder)
        return recorder


def _event(originator_id: Any, version: int, topic: str) -> StoredEvent:
    return StoredEvent(originator_id, version, topic, f"state of {topic}".encode())


class TestKJournalApplicationRecorder(_OnKJournal, ApplicationRecorderTestCase):
    # Ids are positions in the log (notification_ids.py): increasing, not contiguous.
    EXPECT_CONTIGUOUS_NOTIFICATION_IDS = False

    def test_insert_select(self) -> None:
        """The library's test_insert_select asserts the ids 1, 2, 3 themselves; this is the same
        test with the ids the inserts returned (the first is 1 on a new topic all the same)."""
        recorder = self.create_recorder()
        assert recorder.select_notifications(start=None, limit=3) == []
        assert recorder.select_notifications(start=None, limit=3, topics=["topic1"]) == []
        assert recorder.max_notification_id() is None

        first, second = uuid4(), uuid4()
        e1, e2 = _event(first, 1, "topic1"), _event(first, 2, "topic2")
        e3 = _event(second, 1, "topic3")
        ids12 = recorder.insert_events([e1, e2])
        ids3 = recorder.insert_events([e3])
        assert ids12 == [1, 2]
        id1, id2 = ids12
        (id3,) = ids3
        assert id3 > id2
        assert recorder.select_events(first) == [e1, e2]
        with pytest.raises(IntegrityError):
            recorder.insert_events([e3])

        def ids(*args: Any, **kwargs: Any) -> list[int]:
            return [n.id for n in recorder.select_notifications(*args, **kwargs)]

        everything = recorder.select_notifications(start=None, limit=10)
        assert [
            (n.id, n.originator_id, n.originator_version, n.topic, n.state) for n in everything
        ] == [
            (id1, first, 1, "topic1", e1.state),
            (id2, first, 2, "topic2", e2.state),
            (id3, second, 1, "topic3", e3.state),
        ]
        assert ids(start=id1, limit=10) == [id1, id2, id3]
        assert ids(start=None, stop=id2, limit=10) == [id1, id2]
        assert ids(start=id1, limit=10, inclusive_of_start=False) == [id2, id3]
        assert ids(start=id2, limit=10, inclusive_of_start=False) == [id3]
        assert ids(start=None, limit=10, topics=["topic1", "topic2", "topic3"]) == [id1, id2, id3]
        assert ids(id1, 10, topics=["topic1"]) == [id1]
        assert ids(id1, 3, topics=["topic2"]) == [id2]
        assert ids(id1, 3, topics=["topic3"]) == [id3]
        assert ids(id1, 3, topics=["topic1", "topic3"]) == [id1, id3]
        assert recorder.max_notification_id() == id3
        assert ids(None, 1) == [id1]
        assert ids(id2, 1) == [id2]
        assert ids(id1, 1, inclusive_of_start=False) == [id2]
        assert ids(id2, 2) == [id2, id3]
        assert ids(id3, 1) == [id3]
        assert ids(id3, 1, inclusive_of_start=False) == []
        assert ids(start=id2, limit=10, stop=id2) == [id2]
        assert ids(start=id1, limit=10, stop=id2) == [id1, id2]
        assert ids(start=id1, limit=10, stop=id2, inclusive_of_start=False) == [id2]
        # Ids between two events, and past the last one.
        assert ids(start=id2 + 1, limit=10) == [id3]
        assert ids(start=id3 + 1, limit=10) == []
        assert ids(start=id3 + 5 * IDS_PER_RECORD, limit=10) == []

    def test_insert_subscribe(self) -> None:
        self.optional_test_insert_subscribe()

    def test_a_refused_insert_is_never_a_notification(self) -> None:
        recorder = self.create_recorder()
        aggregate = uuid4()
        taken = recorder.insert_events([_event(aggregate, 1, "taken")])
        with pytest.raises(IntegrityError):
            recorder.insert_events([_event(aggregate, 1, "refused"), _event(aggregate, 2, "x")])
        later = recorder.insert_events([_event(uuid4(), 1, "later")])
        notifications = recorder.select_notifications(None, 10)
        assert [(n.id, n.topic) for n in notifications] == [(*taken, "taken"), (*later, "later")]
        assert recorder.max_notification_id() == later[0]

    def test_a_subscriber_gets_what_is_inserted_after_it_started(self) -> None:
        recorder = self.create_recorder()
        start = recorder.insert_events([_event(uuid4(), 1, "before")])
        with recorder.subscribe(gt=start[0]) as subscription:
            ids = recorder.insert_events([_event(uuid4(), 1, "a"), _event(uuid4(), 1, "b")])
            received = [next(subscription), next(subscription)]
        assert [(n.id, n.topic) for n in received] == list(zip(ids, ["a", "b"], strict=True))

    def test_max_notification_id_looks_back_past_records_that_are_not_notifications(
        self,
    ) -> None:
        recorder = self.create_recorder()
        (last,) = recorder.insert_events([_event(uuid4(), 1, "last")])
        with Client(self.env.get("KJOURNAL_WRITER_URL"), None) as client:
            for _ in range(100):  # marks: records of the log that the feed does not deliver
                client.mark(Key(recorder.topic, "marked"))
        assert recorder.max_notification_id() == last


class TestNonInterleavingNotificationIds(_OnKJournal, NonInterleavingNotificationIDsBaseCase):
    pass


class TestKJournalInfrastructureFactory(_OnKJournal, InfrastructureFactoryTestCase[Factory]):
    def setUp(self) -> None:
        super().setUp()
        self.factory.close()  # the library's setUp made another from self.env: keep ours

    def expected_factory_class(self) -> type[Factory]:
        return Factory

    def expected_aggregate_recorder_class(self) -> type[KJournalAggregateRecorder]:
        return KJournalAggregateRecorder

    def expected_application_recorder_class(self) -> type[ApplicationRecorder]:
        return KJournalApplicationRecorder

    def expected_tracking_recorder_class(self) -> Any:
        raise NotImplementedError

    def tracking_recorder_subclass(self) -> Any:
        raise NotImplementedError

    def expected_process_recorder_class(self) -> Any:
        raise NotImplementedError

    def test_create_tracking_recorder(self) -> None:
        pytest.skip(
            "impossible on Kafka: a tracking record cannot be written atomically with the "
            "events it tracks (the factory raises NotImplementedError, tests/unit/eventsourcing)"
        )

    def test_create_process_recorder(self) -> None:
        pytest.skip(
            "impossible on Kafka: a process recorder writes tracking records atomically with "
            "events (the factory raises NotImplementedError, tests/unit/eventsourcing)"
        )


def test_a_topic_with_several_partitions_is_refused(app_env: dict[str, str], topic: str) -> None:
    env = {**app_env, "KJOURNAL_TOPIC": topic}
    refused = pytest.raises(InfrastructureFactoryError, match="has 4 partitions")
    with closing(InfrastructureFactory.construct(env)) as factory, refused:
        factory.application_recorder()  # the services' fresh topic: 4 partitions


def test_a_topic_that_does_not_exist_is_refused(app_env: dict[str, str]) -> None:
    missing = unique_name("journal_none")
    env = {**app_env, "KJOURNAL_TOPIC": missing}
    refused = pytest.raises(InfrastructureFactoryError, match="does not exist")
    with closing(InfrastructureFactory.construct(env)) as factory, refused:
        factory.application_recorder()


# Imported by module: pytest would collect the library's class itself too.
class TestExampleApplication(library_application.ExampleApplicationTestCase):
    expected_factory_topic = "kjournal_eventsourcing:Factory"

    @pytest.fixture(autouse=True)
    def _environment(self, app_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
        for name, value in app_env.items():
            monkeypatch.setenv(name, value)


class SQLiteEventCountersView(SQLiteTrackingRecorder, library_projection.EventCountersView):
    """The library's event counters view, on SQLite (its projection test case needs one)."""

    def construct_create_table_statements(self) -> list[str]:
        return [
            *super().construct_create_table_statements(),
            "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, count INTEGER)",
        ]

    def wait(
        self,
        application_name: str,
        notification_id: int | None,
        timeout: float = 10.0,
        interrupt: threading.Event | None = None,
    ) -> None:
        # The library's default (1 s) is a timing assumption a busy 2-core host breaks: each
        # notification goes through the writer, Kafka and the reader's feed before the view.
        super().wait(application_name, notification_id, timeout, interrupt)

    def get_created_event_counter(self) -> int:
        return self._count("created")

    def get_subsequent_event_counter(self) -> int:
        return self._count("subsequent")

    def incr_created_event_counter(self, tracking: Tracking) -> None:
        self._increment("created", tracking)

    def incr_subsequent_event_counter(self, tracking: Tracking) -> None:
        self._increment("subsequent", tracking)

    def _count(self, name: str) -> int:
        with self.datastore.transaction(commit=False) as cursor:
            cursor.execute("SELECT count FROM counters WHERE name = ?", (name,))
            row = cursor.fetchone()
        return 0 if row is None else int(row[0])

    def _increment(self, name: str, tracking: Tracking) -> None:
        with self.datastore.transaction(commit=True) as cursor:
            # The view's counter and its tracking record in one transaction.
            cursor.execute(
                self.insert_tracking_statement,
                {
                    "application_name": tracking.application_name,
                    "notification_id": tracking.notification_id,
                },
            )
            cursor.execute(
                "INSERT INTO counters (name, count) VALUES (?, 1) "
                "ON CONFLICT (name) DO UPDATE SET count = count + 1",
                (name,),
            )


class TestProjectionWithItsViewOnSQLite(
    library_projection.AggregateEventCountersProjectionTestCase
):
    view_class = SQLiteEventCountersView
    env: ClassVar[dict[str, str]] = {}

    @pytest.fixture(autouse=True)
    def _environment(self, app_env: dict[str, str], tmp_path: Path) -> None:
        view = library_projection.AggregateEventCountersProjection.name.upper()
        type(self).env = {
            **app_env,
            f"{view}_PERSISTENCE_MODULE": "eventsourcing.sqlite",
            f"{view}_SQLITE_DBNAME": str(tmp_path / "view.db"),
        }


EXAMPLE = Path(__file__).parents[3] / "libs" / "kjournal-eventsourcing" / "examples" / "bank.py"


def test_the_example_application_runs_and_the_cli_reads_its_events(
    app_env: dict[str, str],
) -> None:
    """The README's example, with no replicator anywhere (these services have none): the
    application reads what it wrote from Kafka alone, and so does `kjournal read`."""
    env = {**os.environ, **app_env}
    ran = subprocess.run(
        [sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert "refused: Ada has 70.00, not 1000.00" in ran.stdout
    account = re.search(r"account (\S+): balance 70\.00", ran.stdout)
    assert account is not None, ran.stdout
    logged = re.findall(r"^\s+(\d+)\s+(\d)\s+(\w+)$", ran.stdout, re.MULTILINE)
    assert [(version, name) for _, version, name in logged] == [
        ("1", "Opened"),
        ("2", "Deposited"),
        ("3", "Deposited"),
        ("4", "Deposited"),
        ("5", "Deposited"),
        ("6", "Withdrawn"),
    ]
    read = subprocess.run(
        [sys.executable, "-m", "kjournal.cli", "read", app_env["KJOURNAL_TOPIC"], account[1]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert read.returncode == 0, read.stderr
    shown = [
        match[1]
        for line in read.stdout.splitlines()
        if (match := re.search(r"__main__:Account\.(\w+)", line))
    ]
    assert shown == ["Opened", "Deposited", "Deposited", "Deposited", "Deposited", "Withdrawn"]
