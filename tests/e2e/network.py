"""What a pod can reach, asked from inside it: one exec runs a TCP connect to each target (by
name through the cluster's DNS, or by address) and answers which connected. Checks poll until
the expected reachability holds: a NetworkPolicy takes a moment to be programmed into the node.

Probe pods for other namespaces run the writer image (it has Python), sleeping."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


def writer_image_pod(
    name: str, labels: Mapping[str, str], command: list[str], *, never_ready: bool = False
) -> client.V1Pod:
    """A pod of the writer image (it has Python) running `command`, hardened as the chart's are.
    `never_ready`: a readiness probe that never passes, so that a pod carrying a component's
    labels never becomes an endpoint of that component's Service."""
    probe = client.V1Probe(_exec=client.V1ExecAction(command=["false"]), period_seconds=60)
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
                    readiness_probe=probe if never_ready else None,
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


# One CQL (protocol v4) handshake, with nothing but the standard library: what a writer pod could
# try on its own. STARTUP, then READY (a session without credentials) or AUTHENTICATE (the node
# wants a role); with credentials, an AUTH_RESPONSE (SASL PLAIN) answered AUTH_SUCCESS is a
# session. Prints one line `CQL {json}`; the connection is its first network action.
_CQL_PROBE = """
import json, socket, struct, sys, time
host, port, creds = sys.argv[1], int(sys.argv[2]), sys.argv[3:5]
def frame(opcode, body):
    return struct.pack(">BBhBi", 4, 0, 0, opcode, len(body)) + body
def text(value):
    data = value.encode()
    return struct.pack(">H", len(data)) + data
def receive(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed by the server")
        data += chunk
    return data
def answer(sock):
    _, _, _, opcode, length = struct.unpack(">BBhBi", receive(sock, 9))
    body = receive(sock, length)
    if opcode == 0x00:
        code, size = struct.unpack(">iH", body[:6])
        return opcode, f"ERROR {code:#06x} {body[6:6 + size].decode()}"
    if opcode == 0x03:
        (size,) = struct.unpack(">H", body[:2])
        return opcode, f"AUTHENTICATE {body[2:2 + size].decode()}"
    return opcode, {0x02: "READY", 0x10: "AUTH_SUCCESS", 0x0E: "AUTH_CHALLENGE"}.get(opcode, hex(opcode))
result = {"attempt_at": time.time(), "session": False}
try:
    sock = socket.create_connection((host, port), timeout=3)
except OSError as exc:
    result["tcp"] = f"closed: {exc}"
else:
    result["tcp"] = "open"
    try:
        with sock:
            sock.settimeout(10)
            sock.sendall(frame(0x01, struct.pack(">H", 1) + text("CQL_VERSION") + text("3.0.0")))
            opcode, said = answer(sock)
            result["answer"] = said
            result["session"] = opcode == 0x02
            if opcode == 0x03 and len(creds) == 2:
                token = b"\\0" + creds[0].encode() + b"\\0" + creds[1].encode()
                sock.sendall(frame(0x0F, struct.pack(">i", len(token)) + token))
                opcode, said = answer(sock)
                result["authenticated"] = said
                result["session"] = opcode == 0x10
    except OSError as exc:
        result["answer"] = f"failed: {exc!r}"
print("CQL " + json.dumps(result), flush=True)
"""


def cql_command(
    host: str, port: int = 9042, credentials: tuple[str, str] | None = None
) -> list[str]:
    """The command that runs one CQL handshake with `host:port` (with a role's credentials, or
    none, as the writer has) and prints its outcome."""
    return ["python", "-c", _CQL_PROBE, host, str(port), *(credentials or ())]


def cql_outcome(output: str) -> dict[str, Any]:
    """The outcome a CQL probe printed: `tcp` (open, or why not), `answer` (the node's first
    answer), `session` (whether a session was established), `attempt_at` (epoch seconds)."""
    line = next((line for line in output.splitlines() if line.startswith("CQL ")), None)
    if line is None:
        raise AssertionError(f"the CQL probe printed: {output[-500:]}")
    outcome: dict[str, Any] = json.loads(line.removeprefix("CQL "))
    return outcome


def cql_handshake(
    api: client.ApiClient, pod: Pod, host: str, credentials: tuple[str, str] | None = None
) -> dict[str, Any]:
    """One CQL handshake from inside `pod`."""
    return cql_outcome(exec_in(api, pod, cql_command(host, credentials=credentials)))
