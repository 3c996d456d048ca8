"""What every benchmark prints about the machine it ran on."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def host_line() -> str:
    """The CPU, its cores and Python: the first line of what a bench says about its host."""
    return f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def load_average() -> str:
    """The host's 1, 5 and 15 minute load averages, as the benches print them."""
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())
