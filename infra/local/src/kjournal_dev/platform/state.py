"""What `up` started: PIDs, ports, data and log locations, kept in a small JSON file."""

from __future__ import annotations

import json
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from kjournal_dev.state_file import read_state


@dataclass
class ComponentState:
    name: str
    pid: int
    address: str
    log_file: str
    marker: str
    ports: list[int] = field(default_factory=list)
    restarts: int = 0  # times `up` started it again after it had died
    restarted_at: str | None = None


@dataclass
class PlatformState:
    data_dir: str
    components: dict[str, ComponentState] = field(default_factory=dict)
    secure: bool = False  # Kafka SCRAM + ACLs, Cassandra roles, HTTP authentication

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> PlatformState | None:
        raw = read_state(path)
        if raw is None:
            return None
        components = {name: ComponentState(**c) for name, c in raw.get("components", {}).items()}
        return cls(data_dir=raw["data_dir"], components=components, secure=bool(raw.get("secure")))
