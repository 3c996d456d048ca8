"""The check CronJob run once in kind, as an operator starts it by hand (`kubectl create job
--from=cronjob/kjournal-check`): its Spark driver in the Job's pod starts an executor pod through
its own ServiceAccount, reads the journal topic with the replicator's Kafka source, compares
Cassandra journal by journal (the NetworkPolicies letting exactly that through), and finds the
release's journals as the replicator left them. Runs before test_kjournal_on_kind.py (file order)
on the same release."""

from __future__ import annotations

import json
import time
import uuid
from functools import partial
from typing import Any

import pytest
from kubernetes import client

from tests.e2e.conftest import Release
from tests.support.k8s import http
from tests.support.k8s import port_forward
from tests.support.k8s import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]

TOPIC = "journal"
CHECK_EXECUTORS = "app.kubernetes.io/instance=kjournal,app.kubernetes.io/component=check-executor"


def _append(writer: str, journal: str, seq_nrs: list[int]) -> None:
    deadline = time.monotonic() + 120
    while True:
        status, _, body = http(
            "POST",
            f"{writer}/v1/journals/{TOPIC}/{journal}/events",
            {"events": [{"seqNr": n, "payload": {"n": n}} for n in seq_nrs]},
        )
        if status in (200, 201):
            return
        assert status == 504, body[:500]  # the reader not routable yet: resend (safe)
        assert time.monotonic() < deadline, body[:500]
        time.sleep(1)


def _replicated(reader: str, journal: str) -> bool:
    status, _, body = http("GET", f"{reader}/v1/journals/{TOPIC}/{journal}")
    return status == 200 and json.loads(body)["unreplicatedActions"] == 0


def _job_from_cron_job(release: Release, name: str) -> str:
    """What `kubectl create job --from=cronjob/<name>` makes: a Job of the CronJob's template,
    owned by it (so that helm uninstall takes it away)."""
    batch = client.BatchV1Api(release.cluster.api)
    cron_job = batch.read_namespaced_cron_job(name, release.namespace)
    job_name = f"{name}-e2e-{uuid.uuid4().hex[:5]}"
    template = cron_job.spec.job_template
    job = client.V1Job(
        metadata=client.V1ObjectMeta(
            name=job_name,
            labels=template.metadata.labels,
            owner_references=[
                client.V1OwnerReference(
                    api_version="batch/v1",
                    kind="CronJob",
                    name=name,
                    uid=cron_job.metadata.uid,
                    controller=True,
                )
            ],
        ),
        spec=template.spec,
    )
    batch.create_namespaced_job(release.namespace, job)
    return job_name


def _finished(release: Release, job_name: str) -> Any:
    batch = client.BatchV1Api(release.cluster.api)
    status = batch.read_namespaced_job_status(job_name, release.namespace).status
    return status if (status.succeeded or status.failed) else None


def test_the_check_job_runs_as_spark_on_kubernetes_and_finds_cassandra_as_kafka_says(
    release: Release,
):
    journals = [f"check-e2e-{n}-{uuid.uuid4().hex[:6]}" for n in range(3)]
    with port_forward(release.core, release.namespace, release.component("writer")) as writer:
        for n, journal in enumerate(journals):
            _append(writer, journal, list(range(1, n + 3)))
    with port_forward(release.core, release.namespace, release.component("reader")) as reader:
        for journal in journals:
            wait_for(f"{journal} replicated", partial(_replicated, reader, journal), 300)

    job_name = _job_from_cron_job(release, release.component("check"))
    executors = wait_for(
        "the check's executor pod",
        lambda: release.pods(CHECK_EXECUTORS),
        timeout_s=600,
        every_s=0.5,
    )
    release.cluster.show_pods("the check's driver (the Job's pod) and its executor")
    assert {c.image for p in executors for c in p.spec.containers} == {"kjournal/replicator:dev"}
    status = wait_for("the check job to end", lambda: _finished(release, job_name), 900)
    (pod,) = release.pods(f"job-name={job_name}")
    log = release.core.read_namespaced_pod_log(pod.metadata.name, release.namespace)
    release.cluster.report(f"\n$ kubectl logs job/{job_name}   # the check's report\n{log[-3000:]}")
    assert status.succeeded == 1, log[-4000:]
    assert f"kjournal check {TOPIC} (spark):" in log
    assert "result: Cassandra matches the fold of Kafka" in log
    owners = {o.name for p in executors for o in p.metadata.owner_references or []}
    assert owners == {pod.metadata.name}  # the driver in the Job's pod made its executor
