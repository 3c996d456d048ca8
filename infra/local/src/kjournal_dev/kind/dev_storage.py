"""The dev Kafka and Cassandra inside the kind cluster (tests/integration/containers/manifests/
storage.yaml), with the credentials its Cassandra requires.

The dev Cassandra requires authentication, as production values do: its roles come from four
Secrets of the namespace, made here with generated passwords (each only if missing, so a second
run keeps the passwords the running node has). Three of them are the chart's own
`<component>.cassandraSecret`s (skaffold/values-kind.yaml and tests/e2e/values-e2e.yaml name
them); the writer gets none (docs/security.md, Two walls). The passwords go to the API server
through stdin or the API, never onto a command line or into a log.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kjournal_dev.config import find_repo_root
from kjournal_dev.errors import DevError
from kjournal_dev.kind.tool import KindTool

__all__ = [
    "KEYSPACE",
    "ROLES",
    "STORAGE_MANIFEST",
    "Role",
    "apply",
    "secret_manifest",
]

STORAGE_MANIFEST = Path("tests/integration/containers/manifests/storage.yaml")
KEYSPACE = "journal"


@dataclass(frozen=True)
class Role:
    secret: str
    """The Secret's name (keys `username` and `password`)."""
    username: str
    folder: str
    """Where the dev Cassandra's role step finds it (CreateRoles.java): admin, ddl, write, read."""
    grants: str


ROLES: tuple[Role, ...] = (
    Role("cassandra-admin", "kjournal_admin", "admin", "superuser (replaces `cassandra`)"),
    Role("kjournal-cassandra-migrate", "kjournal_migrator", "ddl", "CREATE, ALTER on the keyspace"),
    Role(
        "kjournal-cassandra-replicator",
        "kjournal_replicator",
        "write",
        "SELECT, MODIFY on the keyspace",
    ),
    Role("kjournal-cassandra-reader", "kjournal_reader", "read", "SELECT on the keyspace"),
)


def secret_manifest(role: Role, password: str | None = None) -> dict[str, Any]:
    """The Secret of `role`, with a generated password unless one is given."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": role.secret, "labels": {"app.kubernetes.io/part-of": "kjournal-dev"}},
        "type": "Opaque",
        "stringData": {
            "username": role.username,
            "password": password if password is not None else secrets.token_urlsafe(24),
        },
    }


def apply(tool: KindTool, namespace: str) -> None:
    """The namespace, the role Secrets that are missing, the dev Kafka and Cassandra; returns
    once both are ready (Cassandra: its roles made)."""
    progress, env = tool.progress, tool.engine.env()
    kubectl = tool.cluster.kubectl
    if progress.capture(kubectl("get", "namespace", namespace), env=env, check=False).returncode:
        progress.capture(kubectl("create", "namespace", namespace), env=env)
    made = []
    for role in ROLES:
        found = progress.capture(
            kubectl("-n", namespace, "get", "secret", role.secret), env=env, check=False
        )
        if found.returncode == 0:
            continue
        result = subprocess.run(
            kubectl("-n", namespace, "create", "-f", "-"),
            input=json.dumps(secret_manifest(role)),
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=120,
        )
        if result.returncode != 0:
            error = (result.stderr or result.stdout).strip().splitlines() or ["no output"]
            raise DevError(f"creating the Secret {role.secret} failed: {error[-1]}")
        made.append(role.secret)
    if made:
        progress.report(
            f"Cassandra roles' Secrets in namespace {namespace} (generated passwords): "
            + ", ".join(made)
        )
    progress.run(
        f"starting the dev Kafka and Cassandra (authentication required) in namespace {namespace}",
        kubectl("-n", namespace, "apply", "-f", str(find_repo_root() / STORAGE_MANIFEST)),
        "dev-storage",
        env=env,
    )
    for statefulset in ("kafka", "cassandra"):
        progress.run(
            f"waiting for the dev {statefulset.capitalize()}"
            + (" (its roles made)" if statefulset == "cassandra" else ""),
            kubectl(
                "-n", namespace, "rollout", "status", f"statefulset/{statefulset}", "--timeout=10m"
            ),
            "dev-storage",
            env=env,
        )
