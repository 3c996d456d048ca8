"""Talking to a cluster with the `kubernetes` Python client: port-forwards to a Service's pod (as
`kubectl port-forward service/...` does, from a local port), waits, pod tables, HTTP helpers."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import TypeVar

from kubernetes import client
from kubernetes.stream import portforward

T = TypeVar("T")

_PROXY_THREAD = "Kubernetes port forward proxy"
_starting_forward = threading.Lock()


def wait_for(
    what: str, probe: Callable[[], T | None], timeout_s: float = 300, every_s: float = 2
) -> T:
    """The first truthy answer of `probe`, polled until `timeout_s`; AssertionError naming `what`."""
    deadline = time.monotonic() + timeout_s
    last: object = None
    while True:
        try:
            answer = probe()
            if answer:
                return answer
            last = answer
        except Exception as exc:  # the cluster is still settling: try again
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s (last: {last!r})")
        time.sleep(every_s)


def ready_pod(core: client.CoreV1Api, namespace: str, service: str) -> str:
    """A ready pod behind the Service (what `kubectl port-forward service/...` picks)."""
    selector = core.read_namespaced_service(service, namespace).spec.selector
    labels = ",".join(f"{k}={v}" for k, v in selector.items())
    for pod in core.list_namespaced_pod(namespace, label_selector=labels).items:
        conditions = {c.type: c.status for c in pod.status.conditions or []}
        if pod.metadata.deletion_timestamp is None and conditions.get("Ready") == "True":
            return str(pod.metadata.name)
    raise AssertionError(f"no ready pod behind service/{service}")


class PortForward:
    """127.0.0.1:<port> forwarded to a pod's port through the API server; each accepted connection
    gets its own port-forward stream."""

    def __init__(self, core: client.CoreV1Api, namespace: str, pod: str, port: int) -> None:
        self.core, self.namespace, self.pod, self.remote = core, namespace, pod, port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            ready, _, _ = select.select([self._listener], [], [], 0.2)
            if not ready:
                continue
            try:
                local, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._pump, args=(local,), daemon=True).start()

    def _pump(self, local: socket.socket) -> None:
        # A client of its own: `portforward` swaps the ApiClient's call_api while it runs, which
        # would turn other threads' calls on a shared client into port-forward requests.
        own = client.ApiClient(self.core.api_client.configuration)
        try:
            # The client's proxy thread, told apart from other pumps' by starting one at a time.
            with _starting_forward:
                before = set(threading.enumerate())
                forward = portforward(
                    client.CoreV1Api(own).connect_get_namespaced_pod_portforward,
                    self.pod,
                    self.namespace,
                    ports=str(self.remote),
                )
                proxies = [
                    t
                    for t in threading.enumerate()
                    if t not in before and t.name.startswith(_PROXY_THREAD)
                ]
        except Exception:
            own.close()
            local.close()
            raise
        remote = forward.socket(self.remote)
        try:
            remote.setblocking(True)
            sockets = [local, remote]
            while not self._closed.is_set():
                readable, _, _ = select.select(sockets, [], [], 0.5)
                for source in readable:
                    data = source.recv(65536)
                    if not data:
                        return
                    (remote if source is local else local).sendall(data)
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                local.close()
            with contextlib.suppress(OSError):
                remote.close()
            forward.close()
            # When the API server ends the stream (the pod went away), the proxy thread returns
            # without closing its websocket: close it once that thread is done.
            for proxy in proxies:
                proxy.join(timeout=10)
            if not any(proxy.is_alive() for proxy in proxies):
                forward.websocket.shutdown()
            own.close()

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def port_forward(
    core: client.CoreV1Api, namespace: str, service: str, port: int = 8080
) -> Iterator[str]:
    """`kubectl port-forward service/<service> :<port>`: yields the local base URL."""
    forward = PortForward(core, namespace, ready_pod(core, namespace, service), port)
    try:
        yield f"http://127.0.0.1:{forward.port}"
    finally:
        forward.close()


def http(
    method: str,
    url: str,
    body: object | None = None,
    timeout: float = 30,
    token: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one request, with `token` as its bearer token if given; HTTP
    errors are answers, not exceptions."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        request.add_header("authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def ndjson(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def _age(since: datetime | None) -> str:
    if since is None:
        return "<unknown>"
    seconds = int((datetime.now(UTC) - since).total_seconds())
    return f"{seconds}s" if seconds < 120 else f"{seconds // 60}m"


def pods_wide(core: client.CoreV1Api) -> str:
    """What `kubectl get pods -A -o wide` shows, from the API."""
    rows = [("NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE")]
    for pod in core.list_pod_for_all_namespaces().items:
        statuses = pod.status.container_statuses or []
        ready = sum(1 for s in statuses if s.ready)
        restarts = sum(s.restart_count for s in statuses)
        phase = "Terminating" if pod.metadata.deletion_timestamp else pod.status.phase
        for status in statuses:
            if status.state and status.state.waiting and status.state.waiting.reason:
                phase = status.state.waiting.reason
        rows.append(
            (
                pod.metadata.namespace,
                pod.metadata.name,
                f"{ready}/{len(pod.spec.containers)}",
                str(phase),
                str(restarts),
                _age(pod.status.start_time),
                pod.status.pod_ip or "<none>",
                pod.spec.node_name or "<none>",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
