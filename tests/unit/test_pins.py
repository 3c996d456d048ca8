"""Dependencies whose non-public parts kjournal reaches into are declared with the range they
were tested with, and the installed version is in it: a release outside it fails here, with what
to check, before it fails subtly in production.

Today one: uvicorn, whose httptools protocol `kjournal_service.http_protocol` subclasses (uvicorn
has no public way to bound a request head or time a slow one out). The OpenTelemetry set-up
(`kjournal.telemetry`) uses public names only.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def _declared(pyproject: str, distribution: str) -> Requirement:
    project = tomllib.loads((ROOT / pyproject).read_text())["project"]
    for line in project["dependencies"]:
        requirement = Requirement(line)
        if requirement.name == distribution:
            return requirement
    raise AssertionError(f"{pyproject} does not declare {distribution}")


def test_uvicorn_is_a_version_the_request_limits_were_tested_with() -> None:
    requirement = _declared("libs/kjournal-service/pyproject.toml", "uvicorn")
    assert any(spec.operator == "<" for spec in requirement.specifier), (
        f"{requirement}: kjournal_service/http_protocol.py subclasses uvicorn's httptools "
        "protocol, so the pin needs the upper bound of the versions tested"
    )
    installed = Version(version("uvicorn"))
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"uvicorn {installed} is outside the range tested ({requirement.specifier}): check "
        "kjournal_service/http_protocol.py against its HttpToolsProtocol (the parser callbacks, "
        "`cycle`, STATUS_LINE), run tests/unit/services, then widen the pin"
    )


def test_the_uvicorn_internals_http_protocol_uses_are_there() -> None:
    from uvicorn.protocols.http import httptools_impl

    protocol = httptools_impl.HttpToolsProtocol
    callbacks = [
        "connection_made",
        "connection_lost",
        "data_received",
        "on_message_begin",
        "on_url",
        "on_header",
        "on_headers_complete",
        "on_body",
        "on_message_complete",
    ]
    missing = [name for name in callbacks if not hasattr(protocol, name)]
    assert not missing, f"uvicorn {version('uvicorn')}: HttpToolsProtocol lacks {missing}"
    for status in (408, 414, 431):
        assert status in httptools_impl.STATUS_LINE, f"uvicorn has no status line for {status}"
    cycle = httptools_impl.RequestResponseCycle.__init__.__code__.co_names
    for name in ("response_started", "disconnected", "message_event"):
        assert name in cycle, f"uvicorn {version('uvicorn')}: the request cycle has no {name}"
