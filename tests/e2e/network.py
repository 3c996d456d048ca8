"""What a pod can reach, asked from inside it: one exec runs a TCP connect to each target (by
name through the cluster's DNS, or by address) and answers which connected. Checks poll until
the expected reachability holds: a NetworkPolicy takes a moment to be programmed into the node.

Probe pods for other namespaces run the writer image (it has Python), sleeping."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from kubernetes import client
from kubernetes.stream import stream

from tests.support.k8s import wait_for

CONNECT_TIMEOUT_S = 3
# A generous deadline: policies are programmed within seconds, but the box may be busy.
SETTLE_S = 180

_PROBE = """
import json, socket, sys
timeout, answers = float(sys.argv[1]), {}
for target in sys.argv[2:]:
    host, port = target.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            answers[target] = "open"
    except socket.gaierror as exc:
        answers[target] = f"no address: {exc}"
    except OSError as exc:
        answers[target] = f"closed: {exc}"
print("PROBE " + json.dumps(answers))
"""


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str


def exec_in(api: client.ApiClient, pod: Pod, command: list[str]) -> str:
    # A client of its own (`stream` swaps its call_api while it runs). Its socket is shut here:
    # the client's preloading call leaves it open, and close() skips a connection the server
    # already ended.
    with client.ApiClient(api.configuration) as own:
        session = stream(
            client.CoreV1Api(own).connect_get_namespaced_pod_exec,
            pod.name,
            pod.namespace,
            command=command,
            stderr=True,
            stdout=True,
            stdin=False,
            tty=False,
            _preload_content=False,
        )
        try:
            session.run_forever(timeout=60)
            return "".join(session.read_all())
        finally:
            session.close()
            session.sock.shutdown()


def reachable(api: client.ApiClient, pod: Pod, targets: list[str]) -> dict[str, str]:
    """Each `host:port` → "open", or why not, as seen from `pod`."""
    out = exec_in(api, pod, ["python", "-c", _PROBE, str(CONNECT_TIMEOUT_S), *targets])
    line = next((line for line in out.splitlines() if line.startswith("PROBE ")), None)
    if line is None:
        raise AssertionError(f"the probe in {pod.namespace}/{pod.name} printed: {out[-500:]}")
    answers: dict[str, str] = json.loads(line.removeprefix("PROBE "))
    return answers


def expect(api: client.ApiClient, pod: Pod, wanted: Mapping[str, bool], why: str = "") -> None:
    """Poll until every target is open (True) or not (False) from `pod`."""
    last: dict[str, str] = {}

    def holds() -> bool:
        last.update(reachable(api, pod, list(wanted)))
        return all((last[target] == "open") == want for target, want in wanted.items())

    try:
        wait_for(f"reachability from {pod.namespace}/{pod.name}", holds, SETTLE_S, every_s=1)
    except AssertionError:
        wrong = {
            target: f"wanted {'open' if want else 'closed'}, got {last.get(target)!r}"
            for target, want in wanted.items()
            if (last.get(target) == "open") != want
        }
        raise AssertionError(
            f"from {pod.namespace}/{pod.name}{f' ({why})' if why else ''}, within {SETTLE_S} s: "
            f"{wrong}"
        ) from None


def writer_image_pod(name: str, labels: Mapping[str, str], command: list[str]) -> client.V1Pod:
    """A pod of the writer image (it has Python) running `command`, hardened as the chart's are."""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=dict(labels)),
        spec=client.V1PodSpec(
            restart_policy="Never",
            automount_service_account_token=False,
            termination_grace_period_seconds=0,
            security_context=client.V1PodSecurityContext(run_as_non_root=True),
            containers=[
                client.V1Container(
                    name="main",
                    image="kjournal/writer:dev",
                    image_pull_policy="Never",
                    command=command,
                    security_context=client.V1SecurityContext(
                        read_only_root_filesystem=True, allow_privilege_escalation=False
                    ),
                )
            ],
        ),
    )


def probe_pod(core: client.CoreV1Api, namespace: str) -> Pod:
    """A sleeping pod of the writer image in `namespace`, once it runs."""
    name = f"probe-{uuid.uuid4().hex[:6]}"
    core.create_namespaced_pod(namespace, writer_image_pod(name, {}, ["sleep", "3600"]))
    wait_for(
        f"probe pod {namespace}/{name} running",
        lambda: core.read_namespaced_pod(name, namespace).status.phase == "Running",
        120,
    )
    return Pod(namespace, name)


def namespace(core: client.CoreV1Api, prefix: str, labels: Mapping[str, str]) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    core.create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=dict(labels)))
    )
    return name
