"""A topic the replicator's pattern matches is deleted while it runs: it goes on with the others.

Twice: once the job has replicated the topic (its checkpoint knows the partitions), and right
after the job started, before its first micro-batch (its starting offsets name the partitions).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from kjournal_dev.platform.topics import delete_topics

from tests.integration.spark.support import ReplicatorProcess
from tests.integration.spark.support import SparkTopic
from tests.integration.spark.support import replicator_run
from tests.integration.spark.support import wait_until

pytestmark = pytest.mark.timeout(600)

CATCH_UP_S = 240


@pytest.mark.parametrize("when", ["after replicating it", "before the first micro-batch"])
def test_the_replicator_goes_on_with_the_other_topics(
    when: str, new_topic: Callable[[], SparkTopic], tmp_path: Path
) -> None:
    kept, doomed = new_topic(), new_topic()
    ids = [f"journal-{i}" for i in range(4)]
    kept.append(ids, 3)
    doomed.append(ids, 3)
    pattern = f"{re.escape(kept.name)}|{re.escape(doomed.name)}"
    env = kept.env(tmp_path / "checkpoint", pattern)

    with replicator_run(env, tmp_path / "replicator.log") as job:
        if when == "after replicating it":
            doomed.wait_caught_up(CATCH_UP_S, "replicating both topics", job)
        else:  # the job has listed the topics, and Spark's first micro-batch takes seconds more
            wait_until(
                lambda: _listed(job, doomed.name), CATCH_UP_S, "the job listing the topics", job
            )
        asyncio.run(delete_topics(kept.bootstrap, [doomed.name]))
        kept.append(ids, 2)
        kept.wait_caught_up(CATCH_UP_S, "replicating the other topic", job)
        # Noticed by the next lag measurement or micro-batch; on a busy host the offsets request
        # for a topic Kafka still names in stale metadata can take its whole request timeout.
        wait_until(
            lambda: bool(_deletions(job, doomed.name)), CATCH_UP_S, "the deletion logged", job
        )
        assert job.alive(), job.output()[-5000:]
    assert len(_deletions(job, doomed.name)) == 1, _deletions(job, doomed.name)


def _listed(job: ReplicatorProcess, topic: str) -> bool:
    return any(
        "topics whose whole name matches" in line and topic in line
        for line in job.output().splitlines()
    )


def _deletions(job: ReplicatorProcess, topic: str) -> list[str]:
    return [line for line in job.output().splitlines() if f"topic {topic} was deleted" in line]
