"""The small JSON files the tools record their state in (what `up` started, what dockerd changed on
the host): read back as nothing when missing or torn, so a tool starts as if it had none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["read_state"]


def read_state(path: Path) -> Any | None:
    """The JSON document in `path`; None if there is no file or it is not JSON."""
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
