"""The expiry job's settings from the environment, as the chart and kjournal-dev write them."""

from __future__ import annotations

import pytest
from kjournal_replicator.expiry.settings import ExpirySettings
from pydantic import ValidationError


def test_topics_are_comma_separated_text_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KJOURNAL_EXPIRY__TOPICS", "journal, journal-orders")
    monkeypatch.setenv("KJOURNAL_EXPIRY__MAX_PURGES", "5")
    settings = ExpirySettings()
    assert settings.expiry.topics == ("journal", "journal-orders")
    assert settings.expiry.max_purges == 5
    monkeypatch.setenv("KJOURNAL_EXPIRY__TOPICS", '["journal_sec"]')
    assert ExpirySettings().expiry.topics == ("journal_sec",)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("KJOURNAL_EXPIRY__TOPICS", " , "),
        ("KJOURNAL_EXPIRY__LOOKBACK_DAYS", "0"),
        ("KJOURNAL_EXPIRY__MAX_PURGES", "-1"),
        ("KJOURNAL_EXPIRY__TOPCIS", "journal"),
    ],
)
def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        ExpirySettings()
