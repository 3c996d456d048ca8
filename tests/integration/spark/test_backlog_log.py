"""What the replicator logs about keeping up: once when records wait too long, once when it has
caught up, and never Spark's per-batch "falling behind" trigger warning (item 6 of issue 31)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from kjournal.journal import Journals

from tests.integration.spark.model import append
from tests.integration.spark.support import SparkTopic
from tests.integration.spark.support import replicator_run
from tests.integration.spark.support import wait_until

pytestmark = pytest.mark.timeout(600)

JOURNALS = 40
APPENDS = 20
PER_TRIGGER = 20
TRIGGER_S = 0.5
"""800 records, at most 20 a micro-batch, one micro-batch per 0.5 s at most: catching up takes
20 s or more by construction, while the lag is measured every 0.5 s and records count as
overdue after 3 measurements."""


def test_a_backlog_is_said_once_and_its_end_once_and_spark_s_trigger_warning_never(
    new_topic: Callable[[], SparkTopic], tmp_path: Path
) -> None:
    topic = new_topic()

    async def write(journals: Journals) -> None:
        for _ in range(APPENDS):
            await asyncio.gather(
                *(append(journals, topic.model, f"j{n}", 1) for n in range(JOURNALS))
            )

    topic.write(write)
    env = topic.env(
        tmp_path / "checkpoint",
        KJOURNAL_SPARK__MAX_OFFSETS_PER_TRIGGER=str(PER_TRIGGER),
        KJOURNAL_SPARK__TRIGGER_INTERVAL_S=str(TRIGGER_S),
        KJOURNAL_HTTP__LAG_INTERVAL_S="0.5",
    )
    with replicator_run(env, tmp_path / "replicator.log") as replicator:
        topic.wait_caught_up(300, "catching up", replicator)
        wait_until(
            lambda: "replication has caught up" in replicator.output(),
            60,
            "the replicator saying it has caught up",
            replicator,
        )
    output = replicator.output()
    assert output.count("replication is falling behind:") == 1, output[-4000:]
    assert output.count("replication has caught up") == 1
    assert output.index("replication is falling behind:") < output.index(
        "replication has caught up"
    )
    # a micro-batch every 0.5 s at most, each longer than that on a busy host: Spark would warn
    assert "ProcessingTimeExecutor" not in output
