"""The check against the replicator, one sitting: `uv run python -m bench.check_spark [--journals N]`.

On the Kafka and Cassandra of `scripts/dev up` (started if needed, without the services), a fresh
topic (8 partitions) and keyspace:

1. JOURNALS × 100 events (10 per append: 10 000 journals make 1M events) are appended while no
   replicator runs;
2. the replicator (`python -m kjournal_replicator`, local[2]) catches the backlog up, at most a
   tenth of it per micro-batch; its events per second from the end of its first micro-batch
   (start-up excluded) to pointer2 covering every partition's end, as bench.replication_spark
   measures catch-up; then it stops;
3. the check (`python -m kjournal_replicator.check`, local[2], the same Kafka source) runs over
   the replicated topic: events checked per second over its pass (Kafka read, folded, compared
   with Cassandra journal by journal; the Spark session's start excluded) and over the whole
   command; it must find the topic clean;
4. with `--local-too`, the in-process check (`--local`) over the same topic.

Prints parameters, host, load averages and figures; asserts nothing but a clean check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cassandra.cluster import Session
from kjournal.cassandra.session import connect
from kjournal.cassandra.settings import CassandraSettings
from kjournal.journal import Journals
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.lifecycle import Endpoints
from kjournal_dev.platform.lifecycle import Platform
from kjournal_dev.platform.topics import delete_topics

from bench._host import cpu_model
from bench._host import load_average
from bench._replicator import ReplicatorTarget
from bench._replicator import target_env
from bench.replication_spark import PARTITIONS
from bench.replication_spark import Parameters
from bench.replication_spark import PointerPoller
from bench.replication_spark import append_all
from bench.replication_spark import catch_up
from bench.replication_spark import fresh_keyspace_and_topic
from bench.replication_spark import start_replicator
from bench.replication_spark import stop


def _check_env(endpoints: Endpoints, keyspace: str, topic: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KJOURNAL_")}
    env.update(target_env(ReplicatorTarget.on(endpoints, keyspace, topic)))
    env.update({"KJOURNAL_SPARK__MASTER": "local[2]", "OTEL_SDK_DISABLED": "true"})
    return env


def _check(
    env: dict[str, str], topic: str, folder: Path, local: bool
) -> tuple[dict[str, Any], float]:
    report = folder / f"check-{'local' if local else 'spark'}.json"
    command = [
        sys.executable,
        "-m",
        "kjournal_replicator.check",
        topic,
        "--settle-s",
        "5",
        "--json-file",
        str(report),
        *(["--local"] if local else []),
    ]
    started = time.monotonic()
    with (folder / "check.log").open("ab") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - started
    if code != 0:
        raise SystemExit(f"the check exited with {code} (log: {folder / 'check.log'})")
    (result,) = json.loads(report.read_text())
    return result, wall


async def run(endpoints: Endpoints, session: Session, params: Parameters, local_too: bool) -> None:
    keyspace, topic = await fresh_keyspace_and_topic(endpoints, session)
    folder = Path(tempfile.mkdtemp(prefix="kjournal-bench-check-"))
    poller = PointerPoller(session, keyspace, topic)
    kafka = KafkaSettings(bootstrap_servers=endpoints.kafka_bootstrap)
    total = params.journals * params.events
    try:
        async with Journals(kafka) as journals:
            started = time.monotonic()
            ends = await append_all(journals, topic, "backlog", params)
            print(f"appended {total:,} events in {time.monotonic() - started:.1f} s")
        per_batch = max(sum(ends.values()) // 10, 100)
        print(f"load average before the replicator: {load_average()}")
        replicator = start_replicator(
            endpoints, keyspace, topic, folder, params, max_offsets_per_trigger=per_batch
        )
        try:
            await asyncio.to_thread(catch_up, poller, ends, params.per_append, per_batch)
        finally:
            stop(replicator)
        print(f"load average before the check: {load_average()}")
        env = _check_env(endpoints, keyspace, topic)
        modes = [False, True] if local_too else [False]
        for local in modes:
            report, wall = _check(env, topic, folder, local)
            label = "in process (--local)" if local else "Spark local[2]"
            assert not report["differs"], report
            events = report["events"]
            print(
                f"check, {label}: {report['journals']:,} journals, {events:,} events, "
                f"{report['records']:,} records; the pass {report['passSeconds']:.1f} s: "
                f"{events / report['passSeconds']:,.0f} events/s; the whole command {wall:.1f} s "
                f"(Spark start, Cassandra's ids, the re-check included): "
                f"{events / wall:,.0f} events/s; clean"
            )
            print(f"load average after the check ({label}): {load_average()}")
    finally:
        print(f"logs: {folder}")
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")
        await delete_topics(endpoints.kafka_bootstrap, [topic])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--journals", type=int, default=10_000, help="journals of 100 events (10 000: 1M events)"
    )
    parser.add_argument("--local-too", action="store_true", help="also the in-process check")
    args = parser.parse_args()
    params = Parameters(
        journals=args.journals,
        events=100,
        per_append=10,
        rate=0,
        seconds=0,
        master="local[2]",
        trigger_s=0.2,
        # 500 appends in flight (bench.replication_spark's) filled aiokafka's accumulator past its
        # timeout on a busy host; the backlog's append rate is not what this bench measures.
        concurrency=100,
        rounds=1,
        spark_conf="{}",
    )
    endpoints = Platform(DevConfig.from_env()).up(with_services=False)
    print(
        "bench.check_spark: the check (Kafka folded, compared with Cassandra) against replication"
    )
    print(
        f"parameters: {params.journals:,} journals × {params.events} events, {params.per_append} "
        f"per append ({params.journals * params.events:,} events), {PARTITIONS} partitions; "
        "replicator and check both Spark local[2]"
    )
    print(
        f"host: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}; "
        f"Kafka, Cassandra, Spark and this process share it; load average: {load_average()}"
    )
    session = connect(
        CassandraSettings(contact_points=(endpoints.cassandra_host,), port=endpoints.cassandra_port)
    )
    try:
        asyncio.run(run(endpoints, session, params, args.local_too))
    finally:
        session.cluster.shutdown()


if __name__ == "__main__":
    main()
