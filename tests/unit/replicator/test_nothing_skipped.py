"""A slice that starts past the first offset Cassandra lacks is refused before anything of it is
written (the Kafka source skips what retention deleted when failOnDataLoss is false)."""

from __future__ import annotations

import pytest
from kjournal.errors import MicroBatchError
from kjournal_replicator.apply import check_nothing_skipped


def test_a_slice_starting_past_the_first_needed_offset_is_refused() -> None:
    with pytest.raises(MicroBatchError, match=r"journal:1: offsets 3\.\.9 are no longer in Kafka"):
        check_nothing_skipped("journal", 1, 10, {("journal", 1): 3})


@pytest.mark.parametrize("first_offset", [0, 2, 3])
def test_a_slice_starting_at_or_before_it_is_applied(first_offset: int) -> None:
    check_nothing_skipped("journal", 1, first_offset, {("journal", 1): 3})


def test_partitions_without_an_expectation_are_not_checked() -> None:
    check_nothing_skipped("journal", 2, 10, {("journal", 1): 3})
    check_nothing_skipped("journal", 1, 10, {})
