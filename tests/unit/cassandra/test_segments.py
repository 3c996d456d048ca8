"""Segment and bucket math against values computed independently by Java (jshell)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kjournal.cassandra.segments import java_lower_case
from kjournal.cassandra.segments import java_string_hash
from kjournal.cassandra.segments import journal_segment
from kjournal.cassandra.segments import metajournal_bucket

FIXTURE = Path(__file__).parents[2] / "fixtures" / "cassandra" / "metajournal_buckets.json"
ROWS: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="ascii"))["ids"]


def test_the_fixture_covers_ascii_non_ascii_and_astral_ids():
    ids = [row["id"] for row in ROWS]
    assert any(i.isascii() and i != i.lower() for i in ids)
    assert any(not i.isascii() and max(map(ord, i)) <= 0xFFFF for i in ids)
    assert any(max(map(ord, i)) > 0xFFFF for i in ids)
    assert any(row["hash"] == -(2**31) for row in ROWS)
    # ids Python's own str.lower would put in another bucket than Java 17 does
    assert any(i.lower() != row["lower"] for i, row in zip(ids, ROWS, strict=True))


@pytest.mark.parametrize("row", ROWS, ids=lambda row: ascii(row["id"]))
def test_buckets_match_java(row: dict[str, Any]):
    lower = java_lower_case(row["id"])

    assert lower == row["lower"]
    assert java_string_hash(lower) == row["hash"]
    assert metajournal_bucket(row["id"]) == row["bucket_10000"]
    assert metajournal_bucket(row["id"], 100) == row["bucket_100"]


def test_hash_counts_utf16_units_of_astral_characters():
    emoji = "\U0001f600"  # U+D83D U+DE00 in UTF-16
    assert java_string_hash(emoji) == 0xD83D * 31 + 0xDE00


def test_scaladoc_example():
    assert java_string_hash("journal id") == 969045668
    assert metajournal_bucket("journal ID") == 5668


@pytest.mark.parametrize(
    ("seq_nr", "size", "segment"),
    [
        (1, 2, 0),
        (2, 2, 0),
        (3, 2, 1),
        (1, 10_000, 0),
        (10_000, 10_000, 0),
        (10_001, 10_000, 1),
        (45_629, 10_000, 4),
        (2**63 - 1, 10_000, (2**63 - 2) // 10_000),
    ],
)
def test_journal_segment(seq_nr: int, size: int, segment: int):
    assert journal_segment(seq_nr, size) == segment


def test_journal_segment_refuses_nonsense():
    with pytest.raises(ValueError, match="segment size"):
        journal_segment(1, 1)
    with pytest.raises(ValueError, match="positive"):
        journal_segment(0, 10)


def test_bucket_refuses_non_positive_bucket_counts():
    with pytest.raises(ValueError, match="buckets"):
        metajournal_bucket("x", 0)
