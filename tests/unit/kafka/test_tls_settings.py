"""Kafka TLS settings become a real TLS context for aiokafka (SSL and SASL_SSL; aiokafka builds
none by itself and would fail at connect) and a PEM trust store for the Java client."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.security.tls import LoopbackTls
from pydantic import SecretStr


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> LoopbackTls:
    return LoopbackTls(tmp_path_factory.mktemp("tls")).ensure("127.0.0.1")


def _subjects(context: ssl.SSLContext) -> list[str]:
    names = []
    for certificate in context.get_ca_certs():
        for entry in certificate["subject"]:
            names += [pair[1] for pair in entry if pair[0] == "commonName"]
    return names


@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
def test_tls_protocols_get_a_context_trusting_the_ca_file(tls: LoopbackTls, protocol: str):
    sasl = (
        {"sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "u", "sasl_password": SecretStr("p")}
        if protocol == "SASL_SSL"
        else {}
    )
    settings = KafkaSettings(security_protocol=protocol, ssl_cafile=tls.ca_file, **sasl)  # type: ignore[arg-type]
    options = settings.aiokafka_options()
    context = options["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert _subjects(context) == ["kjournal-dev loopback CA"]
    assert options["security_protocol"] == protocol
    assert ("sasl_plain_password" in options) == (protocol == "SASL_SSL")
    java = settings.java_options()
    assert java["ssl.truststore.type"] == "PEM"
    assert java["ssl.truststore.location"] == str(tls.ca_file)


def test_plaintext_has_no_context_and_files_need_tls(tls: LoopbackTls):
    assert "ssl_context" not in KafkaSettings().aiokafka_options()
    with pytest.raises(ValueError, match="use SSL or SASL_SSL"):
        KafkaSettings(ssl_cafile=tls.ca_file)


def test_an_unreadable_ca_file_fails_when_the_context_is_built(tmp_path: Path):
    settings = KafkaSettings(security_protocol="SSL", ssl_cafile=tmp_path / "missing.pem")
    with pytest.raises(FileNotFoundError):
        settings.aiokafka_options()


def test_the_key_store_is_private(tls: LoopbackTls):
    assert tls.broker_key_store.stat().st_mode & 0o077 == 0
    text = tls.broker_key_store.read_text()
    assert text.startswith("-----BEGIN PRIVATE KEY-----")
    assert text.count("-----BEGIN CERTIFICATE-----") == 2
