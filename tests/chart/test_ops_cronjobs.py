"""The operators' CronJobs (expiry, check) as the chart renders them: off by default; each with
its principal's Secrets, hardened pods, the check's Spark on Kubernetes (its own ServiceAccount,
executors from the chart's pod template) or in local mode, and NetworkPolicies that give each
job what it reaches and nothing more."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from kjournal_dev.errors import DevError

from tests.chart.conftest import CHART
from tests.chart.conftest import Render
from tests.chart.conftest import by_kind
from tests.chart.conftest import egress_ports
from tests.chart.conftest import env_of
from tests.chart.conftest import pod_peers

OPERATIONS = [CHART / "ci/operations-values.yaml"]


def _pod(cron_job: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = cron_job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return spec


def _secret(name: str, key: str) -> dict[str, Any]:
    """An env entry's value taken from `key` of the Secret `name` (as `env_of` gives it)."""
    return {"secretKeyRef": {"name": name, "key": key}}


def test_no_cronjob_unless_asked(render: Render) -> None:
    documents = render()
    assert by_kind(documents, "CronJob") == {}
    assert "kj-kjournal-check" not in by_kind(documents, "ServiceAccount")


def test_the_expiry_job_runs_as_its_own_principal(render: Render) -> None:
    cron_job = by_kind(render(OPERATIONS), "CronJob")["kj-kjournal-expiry"]
    assert cron_job["spec"]["schedule"] == "17 3 * * *"
    assert cron_job["spec"]["timeZone"] == "Etc/UTC"
    assert cron_job["spec"]["concurrencyPolicy"] == "Forbid"
    pod = _pod(cron_job)
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["image"] == "registry.example.com/kjournal/kjournal/replicator:0.1.0"
    assert container["args"] == [
        "python",
        "-m",
        "kjournal_replicator.expiry",
        "--pushgateway",
        "http://pushgateway.monitoring:9091",
    ]
    env = env_of(container)
    assert env["KJOURNAL_EXPIRY__TOPICS"] == "journal,journal-orders"
    assert env["KJOURNAL_EXPIRY__MAX_PURGES"] == "5000"
    assert env["KJOURNAL_KAFKA__SECURITY_PROTOCOL"] == "SASL_SSL"
    assert env["KJOURNAL_KAFKA__SASL_PASSWORD"] == _secret("kjournal-kafka-expiry", "password")
    assert env["KJOURNAL_CASSANDRA__USERNAME"] == _secret("kjournal-cassandra-expiry", "username")
    assert not [name for name in env if name.startswith(("KJOURNAL_SPARK", "KJOURNAL_HTTP"))]
    assert {"name": "kafka-tls", "mountPath": "/etc/kjournal/kafka-tls", "readOnly": True} in (
        container["volumeMounts"]
    )


def test_without_a_secret_of_its_own_the_expiry_job_uses_the_shared_kafka_one(
    render: Render,
) -> None:
    cron_job = by_kind(
        render(sets={"expiry.enabled": "true", "kafka.existingSecret.name": "kjournal-kafka"}),
        "CronJob",
    )["kj-kjournal-expiry"]
    env = env_of(_pod(cron_job)["containers"][0])
    assert env["KJOURNAL_KAFKA__SASL_USERNAME"] == _secret("kjournal-kafka", "username")
    assert "KJOURNAL_CASSANDRA__USERNAME" not in env


def test_the_check_is_a_spark_job_on_kubernetes(render: Render) -> None:
    documents = render(OPERATIONS)
    cron_job = by_kind(documents, "CronJob")["kj-kjournal-check"]
    pod = _pod(cron_job)
    assert pod["serviceAccountName"] == "kj-kjournal-check"
    assert pod["automountServiceAccountToken"] is True
    (container,) = pod["containers"]
    assert container["args"] == [
        "python",
        "-m",
        "kjournal_replicator.check",
        "journal",
        "journal-orders",
        "--repair",
        "--settle-s",
        "60",
        "--pushgateway",
        "http://pushgateway.monitoring:9091",
    ]
    env = env_of(container)
    assert env["KJOURNAL_SPARK__MASTER"] == "k8s://https://kubernetes.default.svc"
    conf = json.loads(env["KJOURNAL_SPARK__CONF"])
    assert conf["spark.driver.host"] == "$(POD_IP)"  # the pod's own address, set before it
    names = [entry["name"] for entry in container["env"]]
    assert names.index("POD_IP") < names.index("KJOURNAL_SPARK__CONF")
    assert conf["spark.kubernetes.container.image"] == container["image"]
    assert conf["spark.executor.instances"] == "3"
    assert conf["spark.kubernetes.executor.podNamePrefix"] == "kj-kjournal-check"
    assert conf["spark.kubernetes.container.image.pullSecrets"] == "registry-credentials"
    # The replicator's role: the repair writes with the replicator's store code.
    assert env["KJOURNAL_CASSANDRA__PASSWORD"] == _secret(
        "kjournal-cassandra-replicator", "password"
    )
    assert env["KJOURNAL_KAFKA__SASL_USERNAME"] == _secret("kjournal-kafka", "username")
    role = by_kind(documents, "Role")["kj-kjournal-check-driver"]
    assert role["rules"][0]["resources"] == [
        "pods",
        "services",
        "configmaps",
        "persistentvolumeclaims",
    ]
    binding = by_kind(documents, "RoleBinding")["kj-kjournal-check-driver"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kj-kjournal-check", "namespace": "kjns"}
    ]
    template = yaml.safe_load(
        by_kind(documents, "ConfigMap")["kj-kjournal-check-spark"]["data"]["executor-pod.yaml"]
    )
    assert template["metadata"]["labels"]["app.kubernetes.io/component"] == "check-executor"
    assert template["spec"]["automountServiceAccountToken"] is False


def test_the_check_in_local_mode_needs_no_service_account(render: Render) -> None:
    documents = render(sets={"check.enabled": "true", "check.mode": "local"})
    pod = _pod(by_kind(documents, "CronJob")["kj-kjournal-check"])
    assert pod["automountServiceAccountToken"] is False
    assert "serviceAccountName" not in pod
    env = env_of(pod["containers"][0])
    assert env["KJOURNAL_SPARK__MASTER"] == "local[2]"
    assert json.loads(env["KJOURNAL_SPARK__CONF"]) == {}
    assert "kj-kjournal-check" not in by_kind(documents, "ServiceAccount")
    assert "kj-kjournal-check-spark" not in by_kind(documents, "ConfigMap")


def test_the_jobs_pods_are_hardened(render: Render) -> None:
    for name, cron_job in by_kind(render(OPERATIONS), "CronJob").items():
        pod = _pod(cron_job)
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
        # Only the check's Spark driver talks to the API server (it runs its executors).
        assert pod["automountServiceAccountToken"] is (name == "kj-kjournal-check"), name


def test_network_policies_give_each_job_what_it_reaches(render: Render) -> None:
    policies = by_kind(render(OPERATIONS), "NetworkPolicy")
    dns, kafka, cassandra, api, pushgateway = {53}, {9093}, {9042}, {443, 6443}, {9091}
    expiry = policies["kj-kjournal-expiry"]
    assert egress_ports(expiry) == dns | kafka | cassandra | pushgateway
    assert expiry["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in expiry["spec"]  # nothing reaches it
    driver = policies["kj-kjournal-check"]["spec"]
    executor = policies["kj-kjournal-check-executor"]["spec"]
    assert egress_ports(policies["kj-kjournal-check"]) == (
        dns | kafka | cassandra | api | pushgateway
    )
    assert egress_ports(policies["kj-kjournal-check-executor"]) == dns | kafka | cassandra
    assert pod_peers(driver["ingress"], "from") == {"check-executor"}
    assert pod_peers(driver["egress"], "to") == {"check-executor"}
    assert pod_peers(executor["ingress"], "from") == {"check", "check-executor"}
    assert pod_peers(executor["egress"], "to") == {"check", "check-executor"}


@pytest.mark.parametrize(
    ("sets", "complaint"),
    [
        ({"check.enabled": "true", "check.mode": "cluster"}, "check/mode"),
        ({"check.enabled": "true", "check.topics": "null"}, "missing property 'topics'"),
        ({"expiry.enabled": "true", "expiry.settings.expiry.max_purges": "-1"}, "max_purges"),
        ({"expiry.enabled": "true", "expiry.settings.expiry.topcis": "journal"}, "topcis"),
    ],
)
def test_wrong_job_values_are_refused_with_their_name(
    render: Render, sets: dict[str, str], complaint: str
) -> None:
    with pytest.raises(DevError, match="values don't meet the specifications") as error:
        render(sets=sets)
    assert complaint in str(error.value)
