"""The writer needs no Cassandra at all; a reader that cannot reach Cassandra answers 503.

The writer keeps appending while the reader pointed at a Cassandra that is not there starts,
reports itself not ready and answers reads with `cassandra-unavailable` + Retry-After; the
session's healthy reader then returns every event the writer acknowledged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from kjournal.client import Client
from kjournal.client import RetryPolicy
from kjournal.errors import CassandraUnavailable
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_writer.settings import Settings as WriterSettings

from tests.integration.services.conftest import kafka_settings
from tests.integration.services.support import RunningService
from tests.integration.services.support import free_port
from tests.integration.services.support import start_service

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]


@pytest.fixture
def reader_without_cassandra(platform: Endpoints, tmp_path: Path) -> Iterator[RunningService]:
    service = start_service(
        "kjournal_reader",
        {
            **kafka_settings(platform),
            "KJOURNAL_CASSANDRA__CONTACT_POINTS": "127.0.0.1",
            "KJOURNAL_CASSANDRA__PORT": str(free_port()),  # nothing listens there
            "KJOURNAL_CASSANDRA__CONNECT_TIMEOUT": "1",
            "KJOURNAL_HTTP__RETRY_AFTER_S": "2",
        },
        tmp_path,
        ready_path="/healthz",  # alive, but never ready
    )
    yield service
    assert service.stop(), service.log()


def test_the_writer_has_no_cassandra_settings_at_all():
    assert "cassandra" not in WriterSettings.model_fields


def test_appends_succeed_while_a_reader_without_cassandra_answers_503(
    writer: RunningService,
    reader: RunningService,
    reader_without_cassandra: RunningService,
    topic: str,
):
    key = Key(topic, "order-1")
    down = reader_without_cassandra.url
    with httpx.Client(timeout=30) as http:
        ready = http.get(down + "/readyz")
        assert ready.status_code == 503
        checks = ready.json()["checks"]
        assert checks["kafka"]["ok"] is True
        assert checks["cassandra"]["ok"] is False
        assert "not connected to Cassandra" in checks["cassandra"]["detail"]

        with Client(writer.url, down, timeout=30, retry=RetryPolicy(attempts=1)) as client:
            for n in range(1, 6):
                client.append(key, [Event(SeqNr(n), payload=JsonPayload({"n": n}))])

            read = http.get(f"{down}/v1/journals/{topic}/order-1/events")
            assert read.status_code == 503
            assert read.headers["retry-after"] == "2"
            assert read.headers["content-type"] == "application/problem+json"
            assert read.json()["type"] == "urn:kjournal:problem:cassandra-unavailable"

            with pytest.raises(CassandraUnavailable):
                client.pointer(key)
            with pytest.raises(CassandraUnavailable):
                list(client.read(key))

    with Client(writer.url, reader.url) as healthy:
        assert [r.seq_nr for r in healthy.read(key)] == [1, 2, 3, 4, 5]
