"""partition_for against the Java client itself (partitioner-java.json, made with jshell)."""

from __future__ import annotations

import json

import pytest
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.partitioner import murmur2 as aiokafka_murmur2
from hypothesis import given
from hypothesis import strategies as st
from kjournal.wire import murmur2
from kjournal.wire import partition_for

from tests.unit.wire import catalog

JAVA = json.loads(catalog.read("partitioner-java.json"))
KEYS = JAVA["keys"]


@pytest.mark.parametrize("case", KEYS, ids=lambda case: case["label"])
def test_murmur2_and_partitions_equal_the_java_client(case):
    key = bytes.fromhex(case["hex"])
    assert murmur2(key) == case["murmur2"]
    for count, partition in case["partitions"].items():
        assert partition_for(key, int(count)) == partition


def test_the_java_table_covers_empty_long_and_non_ascii_keys():
    lengths = {len(bytes.fromhex(case["hex"])) for case in KEYS}
    assert {0, 1, 2, 3, 4, 5, 1000, 1001} <= lengths
    assert any(any(b >= 0x80 for b in bytes.fromhex(case["hex"])) for case in KEYS)
    assert {c for case in KEYS for c in case["partitions"]} == {"1", "3", "8", "12", "100"}


@pytest.mark.parametrize("case", KEYS, ids=lambda case: case["label"])
def test_aiokafka_default_partitioner_agrees_with_the_java_table(case):
    key = bytes.fromhex(case["hex"])
    assert aiokafka_murmur2(key) == case["murmur2"] & 0xFFFFFFFF  # aiokafka's is unsigned
    for count, partition in case["partitions"].items():
        partitions = list(range(int(count)))
        assert DefaultPartitioner()(key, partitions, partitions) == partition


@given(st.binary(max_size=64), st.integers(1, 500))
def test_partition_for_equals_aiokafka_for_any_key(key, count):
    partitions = list(range(count))
    assert partition_for(key, count) == DefaultPartitioner()(key, partitions, partitions)


def test_partition_count_must_be_positive():
    with pytest.raises(ValueError, match="at least one"):
        partition_for(b"k", 0)
