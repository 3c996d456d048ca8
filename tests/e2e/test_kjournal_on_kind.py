"""kjournal installed with helm in kind, as users meet it: appends through a port-forward to the
writer, replication by a Spark driver pod and its executor pods, reads through the reader; the
driver killed under load; a helm upgrade under load; helm test and the schema hook; hardened pods;
the NetworkPolicies, and Cassandra's authentication behind them (a fresh writer pod's first
attempt gets no session); bearer tokens with the issuer's keys and helm test's token from Secrets (a
second release beside the first); and helm uninstall. The tests run in this order and share one release."""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any

import pytest
from kjournal_dev.kind import dev_storage
from kjournal_dev.security.tokens import DEV_AUDIENCE
from kjournal_dev.security.tokens import DEV_ISSUER
from kjournal_dev.security.tokens import DevIssuer
from kubernetes import client

from tests.e2e import network
from tests.e2e.conftest import CHART
from tests.e2e.conftest import HERE
from tests.e2e.conftest import VALUES
from tests.e2e.conftest import Release
from tests.e2e.conftest import phase
from tests.support.k8s import http
from tests.support.k8s import ndjson
from tests.support.k8s import port_forward
from tests.support.k8s import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

TOPIC = "journal"
DRIVER = "app.kubernetes.io/instance=kjournal,app.kubernetes.io/component=replicator"
EXECUTORS = "app.kubernetes.io/instance=kjournal,app.kubernetes.io/component=replicator-executor"


def _append(writer: str, journal: str, seq_nrs: list[int]) -> tuple[int, dict[str, str], Any]:
    status, headers, body = http(
        "POST",
        f"{writer}/v1/journals/{TOPIC}/{journal}/events",
        {"events": [{"seqNr": n, "payload": {"n": n}} for n in seq_nrs]},
    )
    return status, headers, json.loads(body) if body else None


def _appended(writer: str, journal: str, seq_nrs: list[int]) -> Any:
    """Append as a client does: a 504 (the writer could not learn the outcome, e.g. while the
    reader's Service does not route yet after an install) is resent, which docs/concurrency.md
    makes safe; returns the 201's answer, or the 200 replay of the first try."""
    deadline = time.monotonic() + 120
    while True:
        status, _, answer = _append(writer, journal, seq_nrs)
        if status == 201 or (status == 200 and answer["replay"]):
            return answer
        assert status == 504, answer
        assert time.monotonic() < deadline, answer
        time.sleep(1)


def _replicated(reader: str, journal: str) -> dict[str, Any] | None:
    """The journal's status once every action of it is in Cassandra (none only in Kafka)."""
    status, _, body = http("GET", f"{reader}/v1/journals/{TOPIC}/{journal}")
    if status != 200:
        return None
    current: dict[str, Any] = json.loads(body)
    return current if current["unreplicatedActions"] == 0 else None


def _seq_nrs(reader: str, journal: str) -> list[int]:
    status, _, body = http("GET", f"{reader}/v1/journals/{TOPIC}/{journal}/events")
    assert status == 200, body[:500]
    return [event["seqNr"] for event in ndjson(body)]


def test_append_is_replicated_by_executor_pods_and_read_from_cassandra(release: Release):
    journal = f"e2e-{uuid.uuid4().hex[:10]}"
    with port_forward(release.core, release.namespace, release.component("writer")) as writer:
        answer = _appended(writer, journal, [1, 2, 3])
    assert answer["seqNr"] == 3, answer
    driver = wait_for("the driver pod running", lambda: release.running_pods(DRIVER), 300)
    executors = wait_for("an executor pod running", lambda: release.running_pods(EXECUTORS), 300)
    release.cluster.show_pods("Spark driver and executor pods of the replicator")
    assert {c.image for p in executors for c in p.spec.containers} == {"kjournal/replicator:dev"}
    owners = {o.name for p in executors for o in p.metadata.owner_references or []}
    assert owners == {driver[0].metadata.name}  # the driver made them (and they go with it)
    names = {p.metadata.name for p in executors}
    events = release.core.list_namespaced_event(release.namespace).items
    failed_mounts = [
        e.message for e in events if e.reason == "FailedMount" and e.involved_object.name in names
    ]
    assert failed_mounts == []  # operators learn to ignore a warning on every executor
    with port_forward(release.core, release.namespace, release.component("reader")) as reader:
        replicated = wait_for(
            "the append in Cassandra", lambda: _replicated(reader, journal), timeout_s=300
        )
        assert replicated["pointer2"] >= answer["offset"]
        assert _seq_nrs(reader, journal) == [1, 2, 3]


@dataclass
class Load:
    """Appends to a few journals through one writer URL until stopped; what was acknowledged."""

    writer: str
    journals: list[str]
    acked: dict[str, list[int]] = field(default_factory=dict)
    attempted: dict[str, list[int]] = field(default_factory=dict)
    answers: dict[int, int] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        next_seq = dict.fromkeys(self.journals, 1)
        while not self.stop.is_set():
            for journal in self.journals:
                seq_nr = next_seq[journal]
                self.attempted.setdefault(journal, []).append(seq_nr)
                try:
                    status, _, _ = _append(self.writer, journal, [seq_nr])
                except OSError:
                    status = 0
                self.answers[status] = self.answers.get(status, 0) + 1
                if status == 201:
                    self.acked.setdefault(journal, []).append(seq_nr)
                    next_seq[journal] += 1
                elif status not in (0, 503):
                    # 504: outcome unknown; the record may be in Kafka: never reuse its seqNr.
                    next_seq[journal] += 1
            time.sleep(0.05)


@pytest.fixture
def load(release: Release) -> Iterator[Load]:
    journals = [f"load-{uuid.uuid4().hex[:8]}" for _ in range(6)]
    with port_forward(release.core, release.namespace, release.component("writer")) as writer:
        running = Load(writer, journals)
        thread = threading.Thread(target=running.run, daemon=True)
        thread.start()
        try:
            yield running
        finally:
            running.stop.set()
            thread.join(timeout=60)


def test_deleted_driver_pod_comes_back_and_catches_up(release: Release, load: Load):
    old = wait_for("the driver pod running", lambda: release.running_pods(DRIVER), 300)[0]
    wait_for("appends acknowledged", lambda: sum(map(len, load.acked.values())) >= 30, 120, 0.5)
    release.core.delete_namespaced_pod(old.metadata.name, release.namespace)

    def new_driver() -> list[Any]:
        return [p for p in release.running_pods(DRIVER) if p.metadata.name != old.metadata.name]

    new = wait_for("a new driver pod running", new_driver, 300)[0]
    wait_for(
        "executor pods of the new driver",
        lambda: [
            p
            for p in release.running_pods(EXECUTORS)
            if {o.name for o in p.metadata.owner_references or []} == {new.metadata.name}
        ],
        300,
    )
    release.cluster.show_pods("after the driver pod was deleted")
    time.sleep(10)  # appends keep coming while the new driver replicates
    load.stop.set()
    time.sleep(1)
    assert load.answers.get(201, 0) > 0, load.answers
    with port_forward(release.core, release.namespace, release.component("reader")) as reader:
        for journal in load.journals:
            wait_for(f"{journal} replicated", functools.partial(_replicated, reader, journal), 300)
            read = _seq_nrs(reader, journal)
            assert len(read) == len(set(read)), f"{journal}: read twice: {read}"
            assert read == sorted(read)
            assert set(load.acked.get(journal, [])) <= set(read), (journal, load.acked, read)
            assert set(read) <= set(load.attempted[journal])


_LOAD_POD_SCRIPT = """
import json, sys, time, urllib.error, urllib.request
writer, journals, seconds = sys.argv[1], sys.argv[2].split(","), float(sys.argv[3])
acked = {j: [] for j in journals}; next_seq = dict.fromkeys(journals, 1)
answers, failures = {}, []
# The NetworkPolicies let this pod in once the node has its address (a moment after it starts):
# the load begins when the writer first answers.
ready_by = time.monotonic() + 180
while True:
    try:
        with urllib.request.urlopen(f"{writer}/readyz", timeout=5):
            break
    except OSError:
        if time.monotonic() > ready_by:
            raise
        time.sleep(0.5)
print("LOAD-STARTED", flush=True)
deadline = time.monotonic() + seconds
started = time.monotonic()
while time.monotonic() < deadline:
    for journal in journals:
        n = next_seq[journal]
        body = json.dumps({"events": [{"seqNr": n, "payload": {"n": n}}]}).encode()
        request = urllib.request.Request(
            f"{writer}/v1/journals/journal/{journal}/events", body,
            {"content-type": "application/json"})
        at = round(time.monotonic() - started, 2)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, retry_after = answer.status, answer.headers.get("Retry-After")
        except urllib.error.HTTPError as exc:
            status, retry_after = exc.code, exc.headers.get("Retry-After")
        except OSError as exc:
            status, retry_after = 0, None
            failures.append({"at": at, "wall": round(time.time(), 2), "error": repr(exc)})
        answers[str(status)] = answers.get(str(status), 0) + 1
        if status == 201:
            acked[journal].append(n); next_seq[journal] += 1
        elif status != 0:
            failures.append({"at": at, "wall": round(time.time(), 2), "status": status,
                             "retry_after": retry_after})
            if status != 503:
                next_seq[journal] += 1
    time.sleep(0.05)
print("LOAD-SUMMARY " + json.dumps({"answers": answers, "failures": failures, "acked": acked}))
"""


def _load_pod(release: Release, journals: list[str], seconds: int) -> client.V1Pod:
    """An in-cluster client appending through the writer's Service (kube-proxy balances; pods
    roll behind it), with the helm test pod's labels so the NetworkPolicies let it in."""
    writer = f"http://{release.component('writer')}:8080"
    labels = {
        "app.kubernetes.io/name": "kjournal",
        "app.kubernetes.io/instance": "kjournal",
        "app.kubernetes.io/component": "test",
    }
    return network.writer_image_pod(
        f"load-{uuid.uuid4().hex[:6]}",
        labels,
        ["python", "-c", _LOAD_POD_SCRIPT, writer, ",".join(journals), str(seconds)],
    )


def _timeline(release: Release, wall: float) -> str:
    """What the namespace's events and kube-router logged within 20 s of `wall` (a failure's
    moment): which pod was starting, stopping or failing its probes, and whether the policy
    controller was syncing, when a client saw a refusal."""
    near: list[tuple[float, str]] = []
    for event in release.core.list_namespaced_event(release.namespace).items:
        moment = event.last_timestamp or event.event_time or event.first_timestamp
        if moment is not None and abs(moment.timestamp() - wall) <= 20:
            near.append(
                (
                    moment.timestamp(),
                    f"{event.involved_object.kind}/"
                    f"{event.involved_object.name} {event.reason}: {event.message}",
                )
            )
    for router in release.core.list_namespaced_pod(
        "kube-system", label_selector="k8s-app=kube-router"
    ).items:
        log = release.core.read_namespaced_pod_log(
            router.metadata.name,
            "kube-system",
            timestamps=True,
            since_seconds=int(time.time() - wall) + 30,
        )
        for line in log.splitlines():
            stamp, _, text = line.partition(" ")
            moment = datetime.fromisoformat(stamp).timestamp()
            if abs(moment - wall) <= 20:
                near.append((moment, f"kube-router: {text}"))
    return "\n".join(f"{moment - wall:+6.1f} s {what}" for moment, what in sorted(near))


def test_helm_upgrade_under_load_loses_nothing(release: Release):
    journals = [f"upgrade-{uuid.uuid4().hex[:8]}" for _ in range(4)]
    pod = release.core.create_namespaced_pod(release.namespace, _load_pod(release, journals, 150))
    name = pod.metadata.name
    try:
        _upgrade_under_load(release, name)
    finally:
        with contextlib.suppress(client.ApiException):  # the uninstall test expects it gone
            release.core.delete_namespaced_pod(name, release.namespace, grace_period_seconds=0)


def _upgrade_under_load(release: Release, name: str) -> None:
    wait_for(
        "the load pod appending",
        lambda: "LOAD-STARTED" in release.core.read_namespaced_pod_log(name, release.namespace),
        240,
    )
    time.sleep(10)
    before = {
        d: release.apps.read_namespaced_deployment(
            release.component(d), release.namespace
        ).spec.template.metadata.annotations["kjournal.dev/settings"]
        for d in ("writer", "reader")
    }
    release.helm(
        "upgrade",
        "kjournal",
        str(CHART),
        "--values",
        str(VALUES),
        "--set",
        "writer.settings.http.access_log=true",
        "--set",
        "reader.settings.http.access_log=true",
        "--wait",
        "--wait-for-jobs",
        "--timeout",
        "10m",
    )
    after = {
        d: release.apps.read_namespaced_deployment(
            release.component(d), release.namespace
        ).spec.template.metadata.annotations["kjournal.dev/settings"]
        for d in ("writer", "reader")
    }
    assert all(before[d] != after[d] for d in before)  # both rolled their pods
    release.cluster.show_pods("after helm upgrade")
    wait_for(
        "the load pod done",
        lambda: (
            release.core.read_namespaced_pod(name, release.namespace).status.phase == "Succeeded"
        ),
        400,
        5,
    )
    log = release.core.read_namespaced_pod_log(name, release.namespace)
    summary = json.loads(log.split("LOAD-SUMMARY ", 1)[1])
    release.cluster.report(f"load through the upgrade: answers {summary['answers']}")
    assert summary["answers"].get("201", 0) > 0
    for failure in summary["failures"]:
        # never a refused connection, never a 500
        assert failure.get("status") == 503, f"{failure}\n{_timeline(release, failure['wall'])}"
        assert failure.get("retry_after"), failure
    if summary["failures"]:
        moments = [f["at"] for f in summary["failures"]]
        assert max(moments) - min(moments) <= 60, moments
    with port_forward(release.core, release.namespace, release.component("reader")) as reader:
        for journal, acked in summary["acked"].items():
            wait_for(f"{journal} replicated", functools.partial(_replicated, reader, journal), 300)
            read = _seq_nrs(reader, journal)
            assert len(read) == len(set(read))
            assert set(acked) <= set(read), (journal, acked, read)


def test_helm_test_passes_and_the_schema_hook_ran(release: Release):
    out = release.helm_test("kjournal")
    release.cluster.report(out)
    assert "Phase:          Succeeded" in out or "Phase: Succeeded" in out.replace("  ", " ")
    status = json.loads(release.helm("status", "kjournal", "--output", "json"))
    hooks = {hook["name"]: hook for hook in status["hooks"]}
    migrate = hooks["kjournal-migrate"]
    assert set(migrate["events"]) == {"pre-install", "pre-upgrade"}
    assert migrate["last_run"]["phase"] == "Succeeded"


def _exec(release: Release, pod: str, command: list[str]) -> str:
    return network.exec_in(release.cluster.api, network.Pod(release.namespace, pod), command)


def test_pods_run_as_non_root_on_read_only_root_file_systems(release: Release):
    wanted = {"writer", "reader", "replicator", "replicator-executor"}

    def every_component_running() -> list[Any]:
        pods = release.running_pods("app.kubernetes.io/instance=kjournal")
        running = {p.metadata.labels["app.kubernetes.io/component"] for p in pods}
        return pods if wanted <= running else []

    pods = wait_for("a running pod of each component", every_component_running, 300)
    for pod in pods:
        assert pod.spec.security_context.run_as_non_root is True, pod.metadata.name
        for container in pod.spec.containers:
            context = container.security_context
            assert context.read_only_root_filesystem is True, pod.metadata.name
            assert context.allow_privilege_escalation is False, pod.metadata.name
            assert context.capabilities.drop == ["ALL"], pod.metadata.name
    writer = next(p for p in pods if p.metadata.labels["app.kubernetes.io/component"] == "writer")
    assert _exec(release, writer.metadata.name, ["id", "-u"]).strip() == "10001"
    probe = _exec(release, writer.metadata.name, ["sh", "-c", "touch /probe 2>&1; true"])
    assert "Read-only file system" in probe


def _egress_ports(policy: client.V1NetworkPolicy) -> set[int]:
    return {port.port for rule in policy.spec.egress or [] for port in rule.ports or []}


def test_network_policies_are_as_designed(release: Release):
    api = client.NetworkingV1Api(release.cluster.api)
    policies = {
        p.metadata.name: p for p in api.list_namespaced_network_policy(release.namespace).items
    }
    dns, kafka, cassandra, kube_api = {53}, {9092}, {9042}, {443, 6443}
    reader_http = {8080}  # the writer asks the reader each append's outcome
    assert _egress_ports(policies["kjournal-writer"]) == dns | kafka | reader_http
    assert _egress_ports(policies["kjournal-reader"]) == dns | kafka | cassandra
    assert _egress_ports(policies["kjournal-replicator"]) == dns | kafka | cassandra | kube_api
    assert _egress_ports(policies["kjournal-replicator-executor"]) == dns | kafka | cassandra
    assert _egress_ports(policies["kjournal-migrate"]) == dns | cassandra
    for name in ("kjournal-writer", "kjournal-reader"):
        ingress = policies[name].spec.ingress
        assert [port.port for rule in ingress for port in rule.ports] == ["http"]


# values-e2e.yaml's networkPolicy.ingressFrom admits namespaces with this label to the writer
# and the reader.
CLIENT_NAMESPACE_LABEL = {"kjournal-e2e/client": "true"}


def _pod(release: Release, selector: str) -> network.Pod:
    running = wait_for(f"a running pod of {selector}", lambda: release.running_pods(selector), 300)
    return network.Pod(release.namespace, running[0].metadata.name)


def _ip(release: Release, selector: str) -> str:
    pod = _pod(release, selector)
    ip = release.core.read_namespaced_pod(pod.name, pod.namespace).status.pod_ip
    return str(ip)


def _component(name: str) -> str:
    return f"app.kubernetes.io/instance=kjournal,app.kubernetes.io/component={name}"


def test_network_policies_split_access_inside_the_release(release: Release):
    """Enforced by kube-router in kjournal-dev's kind cluster (docs/kubernetes.md). Every target
    is named through the cluster's DNS (so DNS egress works), and each denied port is shown
    open from a pod that may reach it (so it is the policy that closes it)."""
    api, ns = release.cluster.api, release.namespace
    kafka, cassandra = "kafka:9092", "cassandra:9042"
    reader = f"{release.component('reader')}:8080"
    driver = f"{release.component('replicator')}-driver.{ns}.svc"
    executor = _ip(release, EXECUTORS)
    network.expect(
        api,
        _pod(release, _component("writer")),
        {kafka: True, reader: True, cassandra: False, f"{driver}:9400": False},
        "the writer has Kafka rights only, and asks the reader each append's outcome",
    )
    network.expect(api, _pod(release, _component("reader")), {kafka: True, cassandra: True})
    network.expect(
        api,
        _pod(release, DRIVER),
        {
            kafka: True,
            cassandra: True,
            "kubernetes.default.svc:443": True,  # the driver runs its executors through the API
            f"{executor}:7079": True,  # the executor's block manager
        },
    )
    network.expect(
        api,
        _pod(release, EXECUTORS),
        {
            kafka: True,
            cassandra: True,
            f"{driver}:7078": True,  # the driver's RPC endpoint
            f"{driver}:7079": True,  # its block manager
            f"{driver}:9400": True,
        },
    )


def test_network_policies_admit_only_listed_namespaces_to_the_writer_and_reader(
    release: Release,
):
    """From a namespace ingressFrom lists, the writer and the reader answer and nothing else of
    kjournal does; from one it does not list, none of them."""
    api, core, ns = release.cluster.api, release.core, release.namespace
    writer = f"{release.component('writer')}.{ns}.svc:8080"
    reader = f"{release.component('reader')}.{ns}.svc:8080"
    driver, executor = _ip(release, DRIVER), _ip(release, EXECUTORS)
    internal = [f"{driver}:9400", f"{driver}:7078", f"{driver}:7079", f"{executor}:7079"]
    listed = network.namespace(core, "e2e-listed", CLIENT_NAMESPACE_LABEL)
    unlisted = network.namespace(core, "e2e-unlisted", {})
    try:
        network.expect(
            api,
            network.probe_pod(core, listed),
            {writer: True, reader: True, **dict.fromkeys(internal, False)},
            "a namespace networkPolicy.ingressFrom lists",
        )
        network.expect(
            api,
            network.probe_pod(core, unlisted),
            {writer: False, reader: False, **dict.fromkeys(internal, False)},
            "a namespace no policy lists",
        )
    finally:
        for name in (listed, unlisted):
            with contextlib.suppress(client.ApiException):
                core.delete_namespace(name, grace_period_seconds=0)


def _policy_body(policy: client.V1NetworkPolicy) -> client.V1NetworkPolicy:
    meta = policy.metadata
    return client.V1NetworkPolicy(
        metadata=client.V1ObjectMeta(
            name=meta.name, labels=meta.labels, annotations=meta.annotations
        ),
        spec=policy.spec,
    )


def test_network_policies_are_what_denies_and_allows(release: Release):
    """The checks above can fail: without the writer's policy the writer reaches Cassandra, and
    without the reader's Cassandra egress the reader does not. Each policy is put back after."""
    api, ns = release.cluster.api, release.namespace
    net = client.NetworkingV1Api(api)
    cassandra = "cassandra:9042"
    writer, reader = _pod(release, _component("writer")), _pod(release, _component("reader"))

    saved = net.read_namespaced_network_policy("kjournal-writer", ns)
    net.delete_namespaced_network_policy("kjournal-writer", ns)
    try:
        network.expect(api, writer, {cassandra: True}, "its policy deleted")
        # The second wall alone: the node answers, but without a role there is no session; the
        # reader's role gets one (so the probe can tell a session when there is one).
        alone = network.cql_handshake(api, writer, "cassandra")
        release.cluster.report(f"writer pod, its policy deleted, no credentials: {alone}")
        assert alone["tcp"] == "open", alone
        assert alone["answer"].startswith("AUTHENTICATE "), alone
        assert alone["session"] is False, alone
        with_role = network.cql_handshake(api, writer, "cassandra", _credentials(release, READER))
        assert with_role["authenticated"] == "AUTH_SUCCESS", with_role
        assert with_role["session"] is True, with_role
    finally:
        net.create_namespaced_network_policy(ns, _policy_body(saved))
    network.expect(api, writer, {cassandra: False}, "its policy back")

    saved = net.read_namespaced_network_policy("kjournal-reader", ns)
    trimmed = copy.deepcopy(_policy_body(saved))
    trimmed.spec.egress = [
        rule for rule in saved.spec.egress if 9042 not in {port.port for port in rule.ports or []}
    ]
    assert len(trimmed.spec.egress) == len(saved.spec.egress) - 1
    net.replace_namespaced_network_policy("kjournal-reader", ns, trimmed)
    try:
        network.expect(api, reader, {cassandra: False}, "its Cassandra egress removed")
    finally:
        net.replace_namespaced_network_policy("kjournal-reader", ns, _policy_body(saved))
    network.expect(api, reader, {cassandra: True}, "its policy back")


READER = "kjournal-cassandra-reader"


def _credentials(release: Release, secret: str) -> tuple[str, str]:
    """The role in one of the dev Cassandra's Secrets (kjournal_dev/kind/dev_storage.py)."""
    data = release.core.read_namespaced_secret(secret, release.namespace).data
    username, password = (base64.b64decode(data[key]).decode() for key in ("username", "password"))
    return username, password


def test_a_fresh_writer_pod_gets_no_cassandra_session_from_its_first_attempt(release: Release):
    """Two walls between the writer and Cassandra (docs/security.md): the writer's NetworkPolicy,
    which the network plugin programs for a new pod a moment after it starts, and Cassandra's
    authentication, for which the writer has no role. A pod that the writer's policy selects
    connects to Cassandra as its very first action, with no credentials: whichever wall comes
    first, it gets no session."""
    ns = release.namespace
    deployment = release.apps.read_namespaced_deployment(release.component("writer"), ns)
    for container in deployment.spec.template.spec.containers:
        names = sorted(variable.name for variable in container.env or [])
        assert [name for name in names if name.startswith("KJOURNAL_CASSANDRA__")] == [], names
        assert not container.env_from, container.env_from
    net = client.NetworkingV1Api(release.cluster.api)
    labels = net.read_namespaced_network_policy(
        "kjournal-writer", ns
    ).spec.pod_selector.match_labels
    assert labels["app.kubernetes.io/component"] == "writer", labels
    # The Service's address: no DNS lookup before the attempt (the earliest it can be made).
    cassandra = release.core.read_namespaced_service("cassandra", ns).spec.cluster_ip
    name = f"fresh-writer-{uuid.uuid4().hex[:6]}"
    release.core.create_namespaced_pod(
        ns,
        network.writer_image_pod(name, labels, network.cql_command(cassandra), never_ready=True),
    )
    try:
        pod = wait_for(
            f"pod {name} done",
            lambda: (
                found
                if (found := release.core.read_namespaced_pod(name, ns)).status.phase
                in ("Succeeded", "Failed")
                else None
            ),
            180,
            1,
        )
        outcome = network.cql_outcome(release.core.read_namespaced_pod_log(name, ns))
        started = pod.status.container_statuses[0].state.terminated.started_at
        after = outcome["attempt_at"] - started.timestamp()
        release.cluster.report(
            f"a fresh writer-labelled pod's first connection to Cassandra, {after:.2f} s after its "
            f"container started (whole seconds): {outcome}"
        )
        assert pod.status.phase == "Succeeded", outcome
        assert outcome["session"] is False, outcome
        if outcome["tcp"] == "open":  # the policy was not programmed yet: authentication holds
            assert outcome["answer"].startswith("AUTHENTICATE "), outcome
    finally:
        with contextlib.suppress(client.ApiException):
            release.core.delete_namespaced_pod(name, ns, grace_period_seconds=0)


AUTH_RELEASE = "kjournal-auth"


def _secret(release: Release, name: str, key: str, text: str) -> None:
    body = client.V1Secret(metadata=client.V1ObjectMeta(name=name), string_data={key: text})
    try:
        release.core.create_namespaced_secret(release.namespace, body)
    except client.ApiException as exc:
        if exc.status != 409:
            raise
        release.core.replace_namespaced_secret(name, release.namespace, body)


def _accepted(writer: str, journal: str, token: str) -> bool:
    """Whether the writer takes an append made with `token`. Until the reader's copy of the
    Secret has the new key too, the writer produces but cannot learn the outcome (504); the
    resend is then answered as a replay (200) of the event the first try stored."""
    status, _, _ = http(
        "POST",
        f"{writer}/v1/journals/{TOPIC}/{journal}/events",
        {"events": [{"seqNr": 1, "payload": {"key": "rotated"}}]},
        token=token,
    )
    return status in (200, 201)


def test_bearer_tokens_with_the_issuers_keys_and_the_test_token_from_secrets(
    release: Release, tmp_path
):
    """A second release in the namespace (writer and reader only) with settings.auth on: the
    JWKS comes from auth.jwksSecret, helm test's token from tests.tokenSecret; a key added to the
    Secret is used by the running pods without a restart."""
    issuer = DevIssuer(tmp_path / "issuer").ensure()
    _secret(release, "kjournal-auth-jwks", "jwks.json", issuer.jwks_file.read_text())
    _secret(
        release, "kjournal-auth-token", "token", issuer.mint(["journal:append", "journal:read"])
    )
    writer_name, reader_name = f"{AUTH_RELEASE}-writer", f"{AUTH_RELEASE}-reader"
    try:
        with phase("install (helm install kjournal-auth --wait)"):
            release.helm(
                "install",
                AUTH_RELEASE,
                str(CHART),
                "--values",
                str(VALUES),
                "--set",
                ",".join(
                    [
                        "replicator.enabled=false",
                        "migrate.enabled=false",
                        "networkPolicy.enabled=false",
                        "writer.replicas=1",
                        "reader.replicas=1",
                        "settings.auth.enabled=true",
                        f"settings.auth.issuer={DEV_ISSUER}",
                        f"settings.auth.audience={DEV_AUDIENCE}",
                        "auth.jwksSecret.name=kjournal-auth-jwks",
                        "tests.tokenSecret.name=kjournal-auth-token",
                    ]
                ),
                "--wait",
                "--timeout",
                "10m",
            )
        out = release.helm_test(AUTH_RELEASE)
        assert "Succeeded" in out, out
        journal = f"e2e-auth-{uuid.uuid4().hex[:10]}"
        path = f"/v1/journals/{TOPIC}/{journal}/events"
        body = {"events": [{"seqNr": 1, "payload": {"n": 1}}]}
        reader_only = issuer.mint(["journal:read"])
        with port_forward(release.core, release.namespace, writer_name) as writer:
            status, headers, _ = http("POST", writer + path, body)
            assert status == 401
            challenge = {name.lower(): value for name, value in headers.items()}
            assert challenge["www-authenticate"].startswith("Bearer")
            status, headers, answer = http("POST", writer + path, body, token=reader_only)
            assert status == 403, answer
            assert b"lacks the scope journal:append" in answer
            challenge = {name.lower(): value for name, value in headers.items()}
            assert 'error="insufficient_scope"' in challenge["www-authenticate"]
            status, _, answer = http("POST", writer + path, body, token=issuer.mint())
            assert status == 201, answer

            # A second key, as an issuer rotating its keys publishes it: the Secret holds both.
            rotated = DevIssuer(tmp_path / "rotated").ensure()
            keys = [issuer.public_jwk(), rotated.public_jwk()]
            _secret(release, "kjournal-auth-jwks", "jwks.json", json.dumps({"keys": keys}))
            new_token = rotated.mint(["journal:append"])
            wait_for(
                "a token of the added key accepted (the kubelet syncs the Secret's files)",
                lambda: _accepted(writer, f"{journal}-rotated", new_token),
                240,
            )
        with port_forward(release.core, release.namespace, reader_name) as reader:
            assert http("GET", reader + path)[0] == 401
            status, _, answer = http("GET", reader + path, token=reader_only)
            assert status == 200, answer
            assert [event["seqNr"] for event in ndjson(answer)] == [1]
        restarts = [
            status.restart_count
            for pod in release.pods(f"app.kubernetes.io/instance={AUTH_RELEASE}")
            for status in pod.status.container_statuses or []
        ]
        assert restarts
        assert not any(restarts), restarts
    finally:
        release.helm("uninstall", AUTH_RELEASE, "--wait", "--timeout", "5m")
        for name in ("kjournal-auth-jwks", "kjournal-auth-token"):
            with contextlib.suppress(client.ApiException):
                release.core.delete_namespaced_secret(name, release.namespace)


def _leftovers(release: Release) -> list[str]:
    """What is in the namespace besides the dev Kafka and Cassandra and Kubernetes' defaults."""
    core, ns = release.core, release.namespace
    dev = {"kafka", "cassandra"}
    found = []
    for pod in core.list_namespaced_pod(ns).items:
        if (pod.metadata.labels or {}).get("app") not in dev:
            found.append(f"Pod/{pod.metadata.name}")
    for svc in core.list_namespaced_service(ns).items:
        if svc.metadata.name not in dev:
            found.append(f"Service/{svc.metadata.name}")
    for cm in core.list_namespaced_config_map(ns).items:
        if cm.metadata.name != "kube-root-ca.crt":
            found.append(f"ConfigMap/{cm.metadata.name}")
    for sa in core.list_namespaced_service_account(ns).items:
        if sa.metadata.name != "default":
            found.append(f"ServiceAccount/{sa.metadata.name}")
    for pvc in core.list_namespaced_persistent_volume_claim(ns).items:
        if pvc.metadata.name not in ("data-kafka-0", "data-cassandra-0"):
            found.append(f"PersistentVolumeClaim/{pvc.metadata.name}")
    dev_secrets = {role.secret for role in dev_storage.ROLES}  # the dev Cassandra's roles
    found += [
        f"Secret/{s.metadata.name}"
        for s in core.list_namespaced_secret(ns).items
        if s.metadata.name not in dev_secrets
    ]
    apps = release.apps
    found += [f"Deployment/{d.metadata.name}" for d in apps.list_namespaced_deployment(ns).items]
    batch = client.BatchV1Api(release.cluster.api)
    found += [f"Job/{j.metadata.name}" for j in batch.list_namespaced_job(ns).items]
    rbac = client.RbacAuthorizationV1Api(release.cluster.api)
    found += [f"Role/{r.metadata.name}" for r in rbac.list_namespaced_role(ns).items]
    found += [f"RoleBinding/{r.metadata.name}" for r in rbac.list_namespaced_role_binding(ns).items]
    net = client.NetworkingV1Api(release.cluster.api)
    found += [
        f"NetworkPolicy/{p.metadata.name}" for p in net.list_namespaced_network_policy(ns).items
    ]
    policy = client.PolicyV1Api(release.cluster.api)
    found += [
        f"PodDisruptionBudget/{p.metadata.name}"
        for p in policy.list_namespaced_pod_disruption_budget(ns).items
    ]
    return sorted(found)


def test_helm_uninstall_leaves_only_the_checkpoint_claim(release: Release):
    release.helm("uninstall", "kjournal", "--wait", "--timeout", "5m")
    kept = ["PersistentVolumeClaim/kjournal-replicator-checkpoint"]
    left: list[str] = []

    def only_kept() -> bool:
        left[:] = _leftovers(release)
        return left == kept

    try:
        wait_for("only the kept claim left", only_kept, 180)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; left: {left}") from None
    assert HERE.is_dir()
