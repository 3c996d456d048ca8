"""Running kjournal's images in tests: `docker` against kjournal-dev's engine, containers that are
always removed, `kubectl` and port-forwards against its kind cluster."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from kjournal_dev.kind.tool import KindTool


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def http_get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def http_post_json(url: str, body: object, timeout: float = 10) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


class Docker:
    """The docker CLI of kjournal-dev's engine."""

    def __init__(self, tool: KindTool) -> None:
        self.tool = tool

    def run(
        self, *args: str, check: bool = True, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            self.tool.engine.docker(*args),
            env=self.tool.engine.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"docker {' '.join(args[:3])} ... failed:\n{result.stderr}")
        return result

    def inspect(self, image: str) -> dict[str, Any]:
        loaded = json.loads(self.run("image", "inspect", image).stdout)
        return dict(loaded[0])

    @contextlib.contextmanager
    def container(
        self, image: str, env: Mapping[str, str], args: Sequence[str] = ()
    ) -> Iterator[str]:
        """A detached container on the host's network with a read-only root file system (its
        declared volumes stay writable); removed afterwards, whatever happens."""
        name = f"kjournal-test-{uuid.uuid4().hex[:10]}"
        env_args = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        self.run(
            "run", "-d", "--name", name, "--network", "host", "--read-only", *env_args, image, *args
        )
        try:
            yield name
        finally:
            self.run("rm", "-f", "-v", name, check=False)

    def logs(self, name: str) -> str:
        out = self.run("logs", name, check=False)
        return (out.stdout + out.stderr)[-4000:]

    def running(self, name: str) -> bool:
        out = self.run("inspect", "--format", "{{.State.Running}}", name, check=False)
        return out.stdout.strip() == "true"

    def stop(self, name: str, timeout_s: int = 90) -> int:
        """SIGTERM (as Kubernetes stops a pod), then the exit code."""
        self.run("stop", "--time", str(timeout_s), name, timeout=timeout_s + 30)
        return int(self.run("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip())


def wait_http_ok(url: str, docker: Docker, container: str, timeout_s: float = 90) -> bytes:
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            status, body = http_get(url, timeout=3)
            if status == 200:
                return body
            last = f"{status} {body[:300]!r}"
        except OSError as exc:
            last = repr(exc)
        if not docker.running(container):
            raise AssertionError(f"{container} exited; its log:\n{docker.logs(container)}")
        time.sleep(0.5)
    raise AssertionError(
        f"{url} not ready after {timeout_s} s ({last}); log:\n{docker.logs(container)}"
    )


class Kubectl:
    """kubectl against kjournal-dev's kind cluster, in one namespace."""

    def __init__(self, tool: KindTool, namespace: str) -> None:
        self.tool = tool
        self.namespace = namespace

    def __call__(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 330
    ) -> str:
        result = subprocess.run(
            self.tool.cluster.kubectl("-n", self.namespace, *args),
            env=self.tool.engine.env(),
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed:\n{result.stdout}{result.stderr}"
            )
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "-o", "json"))

    @contextlib.contextmanager
    def port_forward(self, target: str, port: int) -> Iterator[int]:
        """`kubectl port-forward <target> :<port>`, as a user debugging would; yields the local port."""
        process = subprocess.Popen(
            self.tool.cluster.kubectl("-n", self.namespace, "port-forward", target, f":{port}"),
            env=self.tool.engine.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            match = re.search(r"127\.0\.0\.1:(\d+)", line)
            if match is None:
                raise AssertionError(f"port-forward {target} failed: {line}{process.stdout.read()}")
            yield int(match.group(1))
        finally:
            process.terminate()
            process.wait(10)
            if process.stdout is not None:
                process.stdout.close()
