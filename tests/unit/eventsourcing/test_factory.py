"""The factory is found by PERSISTENCE_MODULE and reads its settings as the library's modules do,
an application's prefix first."""

from __future__ import annotations

import pytest
from eventsourcing.persistence import InfrastructureFactory
from eventsourcing.persistence import InfrastructureFactoryError
from eventsourcing.utils import Environment
from kjournal_eventsourcing import Factory
from kjournal_eventsourcing import KJournalAggregateRecorder


def _factory(name: str = "", **env: str) -> Factory:
    factory = InfrastructureFactory.construct(
        Environment(name, {"PERSISTENCE_MODULE": "kjournal_eventsourcing", **env})
    )
    assert isinstance(factory, Factory)
    return factory


def _topic(factory: Factory, purpose: str = "events") -> str:
    recorder = factory.aggregate_recorder(purpose)
    assert isinstance(recorder, KJournalAggregateRecorder)
    factory.close()
    return recorder.topic


def test_topics_default_to_journal_and_a_sibling_for_snapshots() -> None:
    assert _topic(_factory()) == "journal"
    assert _topic(_factory(), "snapshots") == "journal_snapshots"
    assert _topic(_factory(KJOURNAL_TOPIC="bank"), "snapshots") == "bank_snapshots"
    assert _topic(_factory(KJOURNAL_SNAPSHOTS_TOPIC="snaps"), "snapshots") == "snaps"


def test_an_application_s_prefix_wins() -> None:
    factory = _factory("BankAccounts", KJOURNAL_TOPIC="other", BANKACCOUNTS_KJOURNAL_TOPIC="bank")
    assert _topic(factory) == "bank"


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_a_timeout_must_be_a_positive_number(value: str) -> None:
    with pytest.raises(InfrastructureFactoryError, match="KJOURNAL_TIMEOUT_S"):
        _factory(KJOURNAL_TIMEOUT_S=value).aggregate_recorder()


def test_tracking_and_process_recorders_say_where_to_keep_a_view() -> None:
    factory = _factory()
    with pytest.raises(NotImplementedError, match=r"eventsourcing\.sqlite"):
        factory.tracking_recorder()
    with pytest.raises(NotImplementedError, match=r"eventsourcing\.sqlite"):
        factory.process_recorder()
