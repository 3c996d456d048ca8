"""Tags are written in the order a Scala service iterates the same set in (wire/tag_order.py).

tags-scala.json holds that order for 381 sets, printed by scala-library 2.13.18 (see
tests/fixtures/wire/README.md; tests/integration/test_tags_scala.py re-runs it).
"""

from __future__ import annotations

import json

import pytest
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import SeqNr
from kjournal.model import TextPayload
from kjournal.wire import decode_binary_container
from kjournal.wire import encode_binary_container
from kjournal.wire import encode_json_container
from kjournal.wire.tag_order import scala_tag_order

from tests.unit.wire import catalog

SCALA_SETS: list[list[str]] = json.loads(catalog.read("tags-scala.json"))["sets"]


def test_the_scala_sets_cover_small_hash_and_colliding_sets():
    sizes = {len(tags) for tags in SCALA_SETS}
    assert {1, 2, 3, 4, 5, 6, 300} <= sizes
    assert any(any(ord(c) > 0xFFFF for tag in tags for c in tag) for tags in SCALA_SETS)
    assert ["Aa", "BB", "AaAa", "AaBB", "BBAa", "BBBB"] in SCALA_SETS  # two hash collisions


@pytest.mark.parametrize("order", SCALA_SETS, ids=lambda order: f"{len(order)}-tags")
def test_the_order_is_the_one_scala_iterates(order: list[str]):
    assert scala_tag_order(frozenset(order)) == order


def test_up_to_four_tags_are_sorted_by_code_point():
    # U+FFFF sorts before an astral character by code point, after its surrogates in UTF-16.
    assert scala_tag_order(frozenset({"😀", "\uffff", "b", "a"})) == ["a", "b", "\uffff", "😀"]


def test_five_tags_follow_the_hash_set():
    assert scala_tag_order(frozenset("01234")) == ["4", "1", "0", "2", "3"]


def test_both_containers_write_that_order():
    tags = frozenset("01234")
    events = Events((Event(SeqNr(1), tags, TextPayload("t")),))

    assert json.loads(encode_json_container(events))["events"][0]["tags"] == [
        "4",
        "1",
        "0",
        "2",
        "3",
    ]
    binary = encode_binary_container(events)
    assert binary.index(b"4") < binary.index(b"1") < binary.index(b"0") < binary.index(b"2")
    assert decode_binary_container(binary) == events
