"""`worker_gc.tune`: the workers' first-generation threshold."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from kjournal_replicator import worker_gc
from kjournal_replicator.settings import ApplySettings


@pytest.fixture(autouse=True)
def _restore_threshold() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_sets_the_first_generation_only() -> None:
    gc.set_threshold(700, 10, 10)
    worker_gc.tune(50_000)
    assert gc.get_threshold() == (50_000, 10, 10)


def test_zero_leaves_pythons_threshold() -> None:
    gc.set_threshold(700, 10, 10)
    worker_gc.tune(0)
    assert gc.get_threshold() == (700, 10, 10)


def test_the_setting_defaults_to_a_high_threshold_and_refuses_negatives() -> None:
    assert ApplySettings().gc_threshold == 50_000
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        ApplySettings(gc_threshold=-1)
