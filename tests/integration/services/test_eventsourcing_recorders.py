"""kjournal_eventsourcing's aggregate recorder against the real writer and reader: the
eventsourcing library's own AggregateRecorderTestCase, unchanged, plus what kjournal adds (the
snapshot topic, a stored event read back by kjournal's own client)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest
from eventsourcing.persistence import AggregateRecorder
from eventsourcing.persistence import InfrastructureFactory
from eventsourcing.persistence import StoredEvent
from eventsourcing.tests.persistence import AggregateRecorderTestCase
from kjournal.client import Client
from kjournal.model import Key
from kjournal_eventsourcing import Factory

from tests.integration.services.support import RunningService

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


class TestKJournalAggregateRecorder(AggregateRecorderTestCase):
    env: dict[str, str]
    factory: Factory

    @pytest.fixture(autouse=True)
    def _platform(
        self, writer: RunningService, reader: RunningService, topic: str
    ) -> Iterator[None]:
        self.env = {
            "PERSISTENCE_MODULE": "kjournal_eventsourcing",
            "KJOURNAL_WRITER_URL": writer.url,
            "KJOURNAL_READER_URL": reader.url,
            "KJOURNAL_TOPIC": topic,
        }
        with closing(InfrastructureFactory.construct(self.env)) as factory:
            assert isinstance(factory, Factory)
            self.factory = factory
            yield

    def create_recorder(self) -> AggregateRecorder:
        return self.factory.aggregate_recorder()

    def test_a_stored_event_is_a_journal_event_kjournal_reads(self) -> None:
        recorder = self.create_recorder()
        originator_id = self.new_originator_id()
        stored = StoredEvent(originator_id, 1, "bank:Opened", b'{"owner":"Ada"}')
        recorder.insert_events([stored])
        with Client(None, self.env["KJOURNAL_READER_URL"]) as client:
            [record] = client.read(Key(self.env["KJOURNAL_TOPIC"], str(originator_id)))
        assert record.event.seq_nr == 2  # version + 1
        assert record.event.tags == {"bank:Opened"}  # the event's class topic, for feed filters
        assert record.event.payload is not None
        assert record.event.payload.value == {"topic": "bank:Opened", "state": '{"owner":"Ada"}'}

    def test_state_that_is_not_text_is_kept_byte_for_byte(self) -> None:
        recorder = self.create_recorder()
        originator_id = self.new_originator_id()
        stored = StoredEvent(originator_id, 1, "t", bytes(range(256)))
        recorder.insert_events([stored])
        assert recorder.select_events(originator_id) == [stored]

    def test_a_save_of_two_aggregates_appends_each(self) -> None:
        recorder = self.create_recorder()
        first, second = self.new_originator_id(), self.new_originator_id()
        events = [
            StoredEvent(first, 1, "t", b"1"),
            StoredEvent(first, 2, "t", b"2"),
            StoredEvent(second, 1, "t", b"3"),
        ]
        recorder.insert_events(events)
        assert recorder.select_events(first) == events[:2]
        assert recorder.select_events(second) == events[2:]

    def test_newest_first_finds_the_last_of_sparse_versions(self) -> None:
        # A snapshot store's read: versions far apart, the newest wanted (windows doubling down
        # from the journal's seqNr, not a read of the whole journal).
        recorder = self.create_recorder()
        originator_id = self.new_originator_id()
        versions = [1, 2, 90, 300, 301, 1000]
        events = [StoredEvent(originator_id, v, "snapshot", str(v).encode()) for v in versions]
        for event in events:
            recorder.insert_events([event])

        def newest(**kwargs: Any) -> list[int]:
            selected = recorder.select_events(originator_id, desc=True, **kwargs)
            return [event.originator_version for event in selected]

        assert newest(limit=1) == [1000]
        assert newest(limit=3) == [1000, 301, 300]
        assert newest(lte=299, limit=1) == [90]
        assert newest(lte=999, limit=2) == [301, 300]
        assert newest(gt=300) == [1000, 301]
        assert newest(gt=1, lte=90) == [90, 2]
        assert newest() == versions[::-1]
        assert newest(gt=1000) == []
        assert recorder.select_events(self.new_originator_id(), desc=True, limit=1) == []
