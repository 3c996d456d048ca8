"""The fault suite's checker sees every way a journal can go wrong (else its zeros mean nothing)."""

from __future__ import annotations

from collections import Counter

from kjournal.model import JsonValue
from kjournal.model import Key

from tests.faults.invariants import ReadEvents
from tests.faults.invariants import Tally
from tests.faults.invariants import table
from tests.faults.invariants import tally

KEY = Key("journal_faults", "a")
ACKED: dict[Key, dict[int, JsonValue]] = {KEY: {1: "one", 2: "two", 3: "three"}}


def _tally(read: ReadEvents | Exception, before: ReadEvents | Exception | None = None) -> Tally:
    return tally("s", ACKED, {KEY: read if before is None else before}, {KEY: read})


def test_a_clean_read_counts_everything_found() -> None:
    result = _tally([(1, "one"), (2, "two"), (3, "three")])
    assert (result.acknowledged, result.found) == (3, 3)
    assert result.clean


def test_an_unacknowledged_event_that_landed_is_no_fault() -> None:
    result = _tally([(1, "one"), (2, "two"), (3, "three"), (4, "sent, never answered")])
    assert result.clean


def test_each_fault_is_counted() -> None:
    assert _tally([(1, "one"), (3, "three")]).missing == 1
    assert _tally([(1, "one"), (2, "two"), (2, "two"), (3, "three")]).duplicated == 1
    assert _tally([(1, "one"), (3, "three"), (2, "two")]).out_of_order == 1
    assert _tally([(1, "one"), (2, "TWO"), (3, "three")]).wrong_payload == 1
    unreadable = _tally(RuntimeError("500 format-error"))
    assert (unreadable.unreadable, unreadable.missing) == (1, 3)
    differ = _tally([(1, "one"), (2, "two"), (3, "three")], before=[(1, "one"), (2, "two")])
    assert differ.differ == 1
    assert not differ.clean


def test_the_table_has_a_row_per_scenario_with_the_errors_by_status() -> None:
    result = tally("broker SIGKILL", ACKED, {KEY: []}, {KEY: []}, Counter({"503": 4, "504": 1}))
    text = table([result])
    header, rule, row = text.splitlines()
    assert header.startswith("| scenario")
    assert set(rule) <= {"|", "-"}
    assert "broker SIGKILL" in row
    assert "503×4, 504×1" in row
