"""The secured broker's SASL_SSL listener, with the certificate the platform tool made for
loopback: a real writer process produces through it given the CA file (the TLS context its
settings build), a consumer reads the record back through it, and a client that does not trust
the CA is refused by its own certificate check."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import httpx
import pytest
from aiokafka.conn import create_conn
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.security.credentials import CASSANDRA_READER
from kjournal_dev.security.credentials import KAFKA_READER
from kjournal_dev.security.credentials import KAFKA_WRITER
from kjournal_dev.security.tls import LoopbackTls
from pydantic import SecretStr

from tests.integration.services.support import start_service
from tests.security.conftest import TOPIC
from tests.security.conftest import SecuredPlatform
from tests.security.conftest import topic_from_the_start
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.security]


def _tls_settings(secured: SecuredPlatform, principal: str, ca: Path | None) -> KafkaSettings:
    return KafkaSettings(
        bootstrap_servers=secured.config.kafka_tls_bootstrap,
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username=principal,
        sasl_password=SecretStr(secured.credentials.kafka[principal]),
        ssl_cafile=ca,
    )


async def _records_of(settings: KafkaSettings, key: bytes) -> list[bytes]:
    async with topic_from_the_start(settings.aiokafka_options()) as consumer:
        found: list[bytes] = []
        for _ in range(10):
            batches = await consumer.getmany(timeout_ms=1000)
            found += [r.key for rs in batches.values() for r in rs if r.key == key]
            if found:
                break
        return found


def _tls_env(secured: SecuredPlatform, principal: str, ca: Path) -> dict[str, str]:
    return {
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": secured.config.kafka_tls_bootstrap,
        "KJOURNAL_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "KJOURNAL_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "KJOURNAL_KAFKA__SASL_USERNAME": principal,
        "KJOURNAL_KAFKA__SASL_PASSWORD": secured.credentials.kafka[principal],
        "KJOURNAL_KAFKA__SSL_CAFILE": str(ca),
    }


def test_a_writer_and_a_reader_over_sasl_ssl(secured: SecuredPlatform, tmp_path: Path):
    config = secured.config
    ca = LoopbackTls(config.tls_dir).ca_file
    reader_service = start_service(
        "kjournal_reader",
        {
            **_tls_env(secured, KAFKA_READER, ca),
            "KJOURNAL_CASSANDRA__CONTACT_POINTS": config.host,
            "KJOURNAL_CASSANDRA__PORT": str(config.cassandra_port),
            "KJOURNAL_CASSANDRA__KEYSPACE": config.keyspace,
            "KJOURNAL_CASSANDRA__USERNAME": CASSANDRA_READER,
            "KJOURNAL_CASSANDRA__PASSWORD": secured.credentials.cassandra[CASSANDRA_READER],
        },
        tmp_path / "reader",
        ready_path="/readyz",
    )
    writer = start_service(
        "kjournal_writer",
        {**_tls_env(secured, KAFKA_WRITER, ca), "KJOURNAL_READER__URL": reader_service.url},
        tmp_path / "writer",
        ready_path="/readyz",
    )
    try:
        response = httpx.post(
            f"{writer.url}/v1/journals/{TOPIC}/over-tls/events",
            json={"events": [{"seqNr": 1, "payload": {"tls": True}}]},
            timeout=30,
        )
        assert response.status_code == 201, response.text
    finally:
        assert writer.stop(), writer.log()
        assert reader_service.stop(), reader_service.log()
    reader = _tls_settings(secured, KAFKA_READER, ca)
    assert asyncio.run(_records_of(reader, b"over-tls")) == [b"over-tls"]


def test_a_client_that_does_not_trust_the_ca_is_refused(
    secured: SecuredPlatform, pytestconfig: pytest.Config
):
    untrusting = _tls_settings(secured, KAFKA_READER, None)  # the system's CAs only
    host, port = secured.config.kafka_tls_bootstrap.rsplit(":", 1)
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed") as raised:
        asyncio.run(
            create_conn(
                host,
                int(port),
                ssl_context=untrusting.ssl_context(),
                security_protocol="SASL_SSL",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_plain_username=KAFKA_READER,
                sasl_plain_password="unused",
            )
        )
    add_session_report(pytestconfig, "TLS: a client without the CA", str(raised.value))
