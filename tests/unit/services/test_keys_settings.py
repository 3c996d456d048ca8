"""Topic and id rules for URLs, and the services' settings from the environment."""

from __future__ import annotations

import pytest
from kjournal.api.keys import KeyRules
from kjournal.api.keys import quote_segment
from kjournal.errors import InvalidKey
from kjournal.model import Key
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_writer.settings import Settings as WriterSettings
from pydantic import ValidationError

RULES = KeyRules("journal", 8)


@pytest.mark.parametrize(
    ("topic", "id_", "key"),
    [
        ("journal", "a", Key("journal", "a")),
        ("journal-orders.v2", "a%2Fb%20c", Key("journal-orders.v2", "a/b c")),
        ("journal_x", "%C3%BC", Key("journal_x", "ü")),
    ],
)
def test_valid_keys(topic: str, id_: str, key: Key):
    assert RULES.key(topic, id_) == key
    assert RULES.key(quote_segment(key.topic), quote_segment(key.id)) == key


@pytest.mark.parametrize(
    ("topic", "id_", "message"),
    [
        ("orders", "a", "must start with 'journal'"),
        ("journal!", "a", "invalid topic"),
        ("journal" + "x" * 250, "a", "invalid topic"),
        ("journal", "", "must not be empty"),
        ("journal", "123456789", "exceeds the limit of 8"),
        ("journal", "%FF", "not percent-encoded UTF-8"),
    ],
)
def test_invalid_keys(topic: str, id_: str, message: str):
    with pytest.raises(InvalidKey, match=message):
        RULES.key(topic, id_)


def test_an_empty_prefix_allows_any_kafka_topic():
    assert KeyRules("").topic("orders") == "orders"


def test_settings_come_from_kjournal_variables(monkeypatch: pytest.MonkeyPatch):
    for name, value in {
        "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": "k1:9092,k2:9092",
        "KJOURNAL_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "KJOURNAL_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "KJOURNAL_KAFKA__SASL_USERNAME": "writer",
        "KJOURNAL_KAFKA__SASL_PASSWORD": "s3cret",
        "KJOURNAL_CASSANDRA__CONTACT_POINTS": "c1,c2",
        "KJOURNAL_CASSANDRA__PASSWORD": "pw",
        "KJOURNAL_CASSANDRA__USERNAME": "reader",
        "KJOURNAL_HTTP__PORT": "9000",
        "KJOURNAL_HTTP__TOPIC_PREFIX": "journal-",
        "KJOURNAL_FOLD__ENABLED": "false",
    }.items():
        monkeypatch.setenv(name, value)
    writer = WriterSettings()
    reader = ReaderSettings()
    assert writer.kafka.bootstrap_servers == "k1:9092,k2:9092"
    assert writer.kafka.sasl_password is not None
    assert writer.kafka.sasl_password.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(writer)
    assert writer.http.port == 9000
    assert reader.cassandra.contact_points == ("c1", "c2")
    assert "pw" not in repr(reader)
    assert reader.fold.enabled is False
    assert reader.http.topic_prefix == "journal-"


def test_each_service_has_its_own_default_port():
    assert WriterSettings().http.port == 8081
    assert ReaderSettings().http.port == 8082


def test_sasl_without_credentials_is_refused(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KJOURNAL_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("KJOURNAL_KAFKA__SASL_MECHANISM", "PLAIN")
    with pytest.raises(ValidationError, match="needs sasl_username and sasl_password"):
        WriterSettings()
    monkeypatch.setenv("KJOURNAL_KAFKA__SECURITY_PROTOCOL", "PLAINTEXT")
    with pytest.raises(ValidationError, match="use SASL_SSL or SASL_PLAINTEXT"):
        WriterSettings()
