"""What dockerd changes on the host, recorded before it starts and undone after it stops: bridges
(docker0, the kind network's br-*), iptables chains and rules, the FORWARD policy (dockerd sets
DROP when it turns forwarding on), net.ipv4.ip_forward, and the directories dockerd, containerd
and runc create at fixed places (/etc/docker for its key, /run/docker, /run/containerd, ...)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from kjournal_dev.state_file import read_state

_IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")
_TABLES = ("filter", "nat")
_DOCKER_LINK = re.compile(r"^(docker0|br-[0-9a-f]{12}|veth[0-9a-f]+)$")
_DOCKER_RULE = re.compile(r"DOCKER|docker0|br-[0-9a-f]{12}")
# Made by dockerd (its identity key), containerd's shims, runc, libmount, wherever the data root is.
# (its key first: Debian's docker.io package owns /etc/docker itself, not the key dockerd writes)
_ENGINE_PATHS = (
    "/etc/docker/key.json",
    "/etc/docker",
    "/run/docker",
    "/run/containerd",
    "/run/runc",
    "/run/mount",
)
_ENGINE_FILES = {"key.json"}  # the only files we delete with those directories


@dataclass
class HostState:
    ip_forward: str
    links: list[str]
    # "iptables" / "ip6tables" → table → lines of `-S`
    rules: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    absent_paths: list[str] = field(default_factory=list)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, path: Path) -> HostState | None:
        raw = read_state(path)
        if raw is None:
            return None
        return cls(
            ip_forward=raw["ip_forward"],
            links=raw["links"],
            rules=raw["rules"],
            absent_paths=raw.get("absent_paths", []),
        )


def _links() -> list[str]:
    out = subprocess.run(
        ["ip", "-o", "link", "show"], capture_output=True, text=True, check=False
    ).stdout
    names = []
    for line in out.splitlines():
        parts = line.split(": ")
        if len(parts) > 1:
            names.append(parts[1].split("@")[0])
    return names


def _families() -> list[str]:
    return [name for name in ("iptables", "ip6tables") if shutil.which(name)]


def _rules(family: str, table: str) -> list[str]:
    out = subprocess.run(
        [family, "-w", "-t", table, "-S"], capture_output=True, text=True, check=False
    )
    return out.stdout.splitlines() if out.returncode == 0 else []


def snapshot() -> HostState:
    return HostState(
        ip_forward=_IP_FORWARD.read_text().strip() if _IP_FORWARD.exists() else "0",
        links=_links(),
        rules={f: {t: _rules(f, t) for t in _TABLES} for f in _families()},
        absent_paths=[path for path in _ENGINE_PATHS if not Path(path).exists()],
    )


def restore(before: HostState) -> list[str]:
    """Undo what appeared since `before` and looks like dockerd's; returns what was undone."""
    undone: list[str] = []
    for family in _families():
        for table in _TABLES:
            undone += _restore_table(family, table, before.rules.get(family, {}).get(table, []))
    for name in _links():
        if name not in before.links and _DOCKER_LINK.match(name):
            subprocess.run(["ip", "link", "delete", name], capture_output=True, check=False)
            undone.append(f"link {name}")
    if _IP_FORWARD.exists() and _IP_FORWARD.read_text().strip() != before.ip_forward:
        _IP_FORWARD.write_text(before.ip_forward + "\n")
        undone.append(f"net.ipv4.ip_forward={before.ip_forward}")
    for name in before.absent_paths:
        if _remove_engine_dir(Path(name)):
            undone.append(f"removed {name}")
    return undone


def _remove_engine_dir(path: Path) -> bool:
    """Remove the engine's key, or a directory the engine created if it holds nothing but empty
    directories (and that key); anything else is left alone."""
    if path.name in _ENGINE_FILES and path.is_file():
        path.unlink()
        return True
    if not path.is_dir():
        return False
    for item in path.rglob("*"):
        if not item.is_dir() and item.name not in _ENGINE_FILES:
            return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def _restore_table(family: str, table: str, before: list[str]) -> list[str]:
    undone: list[str] = []
    known = set(before)
    now = _rules(family, table)
    base = [family, "-w", "-t", table]
    for line in reversed(now):
        if line.startswith("-A ") and line not in known and _DOCKER_RULE.search(line):
            args = shlex.split(line)
            subprocess.run([*base, "-D", *args[1:]], capture_output=True, check=False)
            undone.append(f"{family} -t {table} {line}")
    for line in now:
        if line.startswith("-N ") and line not in known:
            chain = line.split()[1]
            if _DOCKER_RULE.search(chain):
                subprocess.run([*base, "-F", chain], capture_output=True, check=False)
    for line in now:
        if line.startswith("-N ") and line not in known:
            chain = line.split()[1]
            if _DOCKER_RULE.search(chain):
                subprocess.run([*base, "-X", chain], capture_output=True, check=False)
                undone.append(f"{family} -t {table} chain {chain}")
    for line in before:
        if line.startswith("-P ") and line not in now:
            subprocess.run([*base, *shlex.split(line)], capture_output=True, check=False)
            undone.append(f"{family} -t {table} {line}")
    return undone
