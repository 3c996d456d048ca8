"""Invalid settings are reported by name, one line each, and never with their values: the input
pydantic echoes may hold a password."""

from __future__ import annotations

import pytest
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_service.settings import invalid_settings
from kjournal_writer.settings import Settings as WriterSettings
from pydantic import ValidationError

SECRET = "p4ssw0rd-never-shown"


def test_a_refused_section_names_itself_but_not_the_password(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KJOURNAL_KAFKA__SASL_PASSWORD", SECRET)
    monkeypatch.setenv("KJOURNAL_KAFKA__SASL_MECHANISM", "SCRAM-SHA-512")
    monkeypatch.setenv("KJOURNAL_KAFKA__SASL_USERNAME", "w")
    monkeypatch.setenv("KJOURNAL_HTTP__PORT", "0")
    with pytest.raises(ValidationError) as raised:
        WriterSettings()
    text = invalid_settings(raised.value)
    assert SECRET not in text
    assert text.splitlines() == [
        "  KJOURNAL_KAFKA: Value error, sasl_mechanism is set but security_protocol is "
        "PLAINTEXT: use SASL_SSL or SASL_PLAINTEXT",
        "  KJOURNAL_HTTP__PORT: Input should be greater than or equal to 1",
    ]


def test_a_cassandra_password_without_a_role(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KJOURNAL_CASSANDRA__PASSWORD", SECRET)
    with pytest.raises(ValidationError) as raised:
        ReaderSettings()
    assert SECRET not in invalid_settings(raised.value)
    assert "KJOURNAL_CASSANDRA: Value error, set both username and password" in invalid_settings(
        raised.value
    )
