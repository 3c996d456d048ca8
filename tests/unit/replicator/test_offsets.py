"""Starting offsets and the gap check (no Spark needed)."""

from __future__ import annotations

import json
from pathlib import Path

from kjournal_replicator.offsets import EARLIEST
from kjournal_replicator.offsets import Pointer2
from kjournal_replicator.offsets import checkpoint_has_offsets
from kjournal_replicator.offsets import describe_gap
from kjournal_replicator.offsets import find_gaps
from kjournal_replicator.offsets import starting_offsets
from kjournal_replicator.ranges import OffsetRange


def pointers(known: dict[tuple[str, int], int]) -> Pointer2:
    return lambda topic, partition: known.get((topic, partition))


def test_starts_after_pointer2_or_at_the_earliest_offset() -> None:
    spec = starting_offsets(
        {"journal": [0, 1, 2], "journal_b": [0]}, pointers({("journal", 1): 41})
    )
    assert json.loads(spec) == {
        "journal": {"0": EARLIEST, "1": 42, "2": EARLIEST},
        "journal_b": {"0": EARLIEST},
    }


def test_no_matching_topic_starts_at_the_earliest_offset() -> None:
    assert starting_offsets({}, pointers({})) == "earliest"
    assert starting_offsets({"journal": []}, pointers({})) == "earliest"


def test_a_range_may_replay_but_never_skip() -> None:
    known = pointers({("t", 0): 9, ("t", 1): 9, ("t", 2): 9})
    ranges = [
        OffsetRange("t", 0, 10, 20),  # right after pointer2
        OffsetRange("t", 1, 5, 20),  # replays what pointer2 covers: fine
        OffsetRange("t", 2, 12, 20),  # 10 and 11 were never replicated
        OffsetRange("t", 3, 0, 5),  # no pointer2, from the start
        OffsetRange("t", 4, 7, 7),  # empty: nothing read, nothing skipped
    ]
    assert find_gaps(ranges, known) == [OffsetRange("t", 2, 10, 12)]
    assert describe_gap(OffsetRange("t", 2, 10, 12)) == (
        "t:2 offsets 10..11 (pointer2 9, the micro-batch starts at 12)"
    )


def test_a_partition_without_pointer2_must_start_at_zero() -> None:
    assert find_gaps([OffsetRange("t", 0, 5, 9)], pointers({})) == [OffsetRange("t", 0, 0, 5)]
    assert describe_gap(OffsetRange("t", 0, 0, 5)) == (
        "t:0 offsets 0..4 (pointer2 None, the micro-batch starts at 5)"
    )


def test_a_checkpoint_with_offsets_is_told_from_one_without(tmp_path: Path) -> None:
    location = tmp_path / "checkpoint"
    assert checkpoint_has_offsets(str(location)) is False  # not there yet
    (location / "offsets").mkdir(parents=True)
    assert checkpoint_has_offsets(f"file://{location}") is False  # Spark made it, no batch yet
    (location / "offsets" / "0").write_text("v1")
    assert checkpoint_has_offsets(str(location)) is True
    assert checkpoint_has_offsets(f"file://{location}") is True
    assert checkpoint_has_offsets("s3a://bucket/checkpoint") is None  # cannot look
