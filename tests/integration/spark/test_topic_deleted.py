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
from cassandra.cluster import Session
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.topics import delete_topics

from tests.integration.spark.model import Model, append
from tests.integration.spark.support import ReplicatorProcess, caught_up, replicator_env, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.cassandra, pytest.mark.timeout(600)]

CATCH_UP_S = 240


def _write(bootstrap: str, model: Model, ids: list[str], events: int) -> None:
    async def write() -> None:
        async with Journals(KafkaSettings(bootstrap_servers=bootstrap)) as journals:
            for id in ids:
                await append(journals, model, id, events)

    asyncio.run(write())


@pytest.mark.parametrize("when", ["after replicating it", "before the first micro-batch"])
def test_the_replicator_goes_on_with_the_other_topics(
    when: str,
    platform: Endpoints,
    new_topic: Callable[[], str],
    module_keyspace: str,
    session: Session,
    kafka_bootstrap: str,
    tmp_path: Path,
) -> None:
    kept, doomed = new_topic(), new_topic()
    ids = [f"journal-{i}" for i in range(4)]
    kept_model, doomed_model = Model(kept), Model(doomed)
    _write(kafka_bootstrap, kept_model, ids, 3)
    _write(kafka_bootstrap, doomed_model, ids, 3)
    pattern = f"{re.escape(kept)}|{re.escape(doomed)}"
    env = replicator_env(platform, module_keyspace, pattern, tmp_path / "checkpoint")
    kept_replicated = caught_up(kafka_bootstrap, session, module_keyspace, kept)

    job = ReplicatorProcess(env, tmp_path / "replicator.log")
    try:
        if when == "after replicating it":
            doomed_replicated = caught_up(kafka_bootstrap, session, module_keyspace, doomed)
            wait_until(doomed_replicated, CATCH_UP_S, "replicating both topics", job)
        else:  # the job has listed the topics, and Spark's first micro-batch takes seconds more
            wait_until(lambda: _listed(job, doomed), CATCH_UP_S, "the job listing the topics", job)
        asyncio.run(delete_topics(kafka_bootstrap, [doomed]))
        _write(kafka_bootstrap, kept_model, ids, 2)
        wait_until(kept_replicated, CATCH_UP_S, "replicating the other topic", job)
        # Noticed by the next lag measurement or micro-batch; on a busy host the offsets request
        # for a topic Kafka still names in stale metadata can take its whole request timeout.
        wait_until(lambda: bool(_deletions(job, doomed)), CATCH_UP_S, "the deletion logged", job)
        assert job.alive(), job.output()[-5000:]
        assert job.terminate() == 0
    finally:
        job.kill()
    assert len(_deletions(job, doomed)) == 1, _deletions(job, doomed)


def _listed(job: ReplicatorProcess, topic: str) -> bool:
    return any(
        "topics whose whole name matches" in line and topic in line
        for line in job.output().splitlines()
    )


def _deletions(job: ReplicatorProcess, topic: str) -> list[str]:
    return [line for line in job.output().splitlines() if f"topic {topic} was deleted" in line]
