"""docs/configuration.md, generated from the settings classes themselves.

Every `KJOURNAL_*` variable of the writer, the reader, the replicator (whose settings the check job
reads too), the schema job and the expiry job, and every
`KJOURNAL_DEV_*` variable of this tool: name, type, default, meaning, and which services read it.
`kjournal-dev settings-docs --check` (run by the test suite) fails when the file and the classes
disagree, so neither can drift; `--write` regenerates it.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Literal

from pydantic import BaseModel
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from kjournal_dev.config import DevConfig
from kjournal_dev.config import find_repo_root

__all__ = ["Variable", "render", "service_variables", "variables"]

PREFIX = "KJOURNAL_"
SERVICES = ("writer", "reader", "replicator", "migrate", "expiry")


@dataclass
class Variable:
    name: str
    type: str
    default: str
    meaning: str
    services: list[str] = field(default_factory=list)
    secret: bool = False


def _settings_classes() -> dict[str, type[BaseModel]]:
    from kjournal_migrate.settings import Settings as MigrateSettings
    from kjournal_reader.settings import Settings as ReaderSettings
    from kjournal_replicator.expiry.settings import ExpirySettings
    from kjournal_replicator.settings import ReplicatorSettings
    from kjournal_writer.settings import Settings as WriterSettings

    return {
        "writer": WriterSettings,
        "reader": ReaderSettings,
        "replicator": ReplicatorSettings,
        "migrate": MigrateSettings,
        "expiry": ExpirySettings,
    }


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return " \\| ".join(str(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(arg) for arg in args if arg is not type(None)]
        return " \\| ".join(names) + (" (optional)" if type(None) in args else "")
    if origin in (tuple, list, set, frozenset):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"JSON object of {_type_name(args[1])}" if len(args) == 2 else "JSON object"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(str(member.value) for member in annotation)
    if annotation is SecretStr:
        return "secret"
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        # Collections are fixed; anything else (CPU count, host name, a version) is per machine.
        made = info.default_factory()  # type: ignore[call-arg]
        if not isinstance(made, dict | list | tuple | set):
            return "(computed)"
        value: Any = made
    else:
        value = info.default
    if value is PydanticUndefined:
        return "(computed)"
    if value is None:
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(str(item) for item in value)
    if isinstance(value, dict):
        return "{}" if not value else str(value)
    return str(value)


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _walk(model: type[BaseModel], prefix: str) -> Iterator[Variable]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        variable = f"{prefix}{name.upper()}"
        if _is_section(annotation):
            assert isinstance(annotation, type)
            yield from _walk(annotation, f"{variable}__")
            continue
        meaning = (info.description or "").strip().replace("\n", " ")
        secret = annotation is SecretStr or SecretStr in typing.get_args(annotation)
        yield Variable(variable, _type_name(annotation), _default(info), meaning, secret=secret)


def service_variables(service: str) -> list[Variable]:
    """The variables one service reads, in declaration order."""
    return list(_walk(_settings_classes()[service], PREFIX))


def variables() -> list[Variable]:
    """Every service variable once; one that means different things to different services (the
    replicator's `KJOURNAL_HTTP__*` serve its driver endpoint) is listed once per meaning."""
    merged: dict[tuple[str, str, str, str], Variable] = {}
    for service in SERVICES:
        for variable in service_variables(service):
            key = (variable.name, variable.type, variable.default, variable.meaning)
            merged.setdefault(key, variable).services.append(service)
    return sorted(merged.values(), key=lambda v: (v.name, v.services))


def _dev_variables() -> list[Variable]:
    rows = []
    for name, info in DevConfig.model_fields.items():
        rows.append(
            Variable(
                DevConfig.env_name(name),
                _type_name(info.annotation),
                _default(info),
                (info.description or "").strip(),
                ["kjournal-dev"],
            )
        )
    return sorted(rows, key=lambda v: v.name)


def _cell(text: str) -> str:
    return text.replace("|", "\\|") if "\\|" not in text else text


def _table(rows: list[Variable], with_services: bool) -> list[str]:
    head = "| variable | type | default | meaning |" + (" read by |" if with_services else "")
    rule = "|---|---|---|---|" + ("---|" if with_services else "")
    lines = [head, rule]
    for row in rows:
        default = f"`{row.default}`" if row.default and row.default != "(computed)" else row.default
        meaning = row.meaning + (" **Secret**: never logged." if row.secret else "")
        cells = [f"`{row.name}`", _cell(row.type), default, _cell(meaning)]
        if with_services:
            cells.append(", ".join(row.services))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render() -> str:
    """The whole of docs/configuration.md."""
    lines = [
        "# Configuration",
        "",
        "<!-- Generated by `kjournal-dev settings-docs --write` from the settings classes;",
        "     a test fails when this file and the classes disagree. Do not edit by hand. -->",
        "",
        "Every setting is an environment variable. The services read `KJOURNAL_*`: sections nest",
        "with `__` (`KJOURNAL_KAFKA__BOOTSTRAP_SERVERS` is `bootstrap_servers` of the `kafka`",
        "section), lists take commas or JSON, maps JSON. An unknown variable inside a section, or a",
        "bad value, stops the service at start with a message naming it. Each section's class sits",
        "beside its component (`kjournal/kafka/settings.py`, `kjournal/cassandra/settings.py`, ...);",
        "each service composes them in its own `settings.py` (docs/architecture.md).",
        "",
        "## Services",
        "",
        *_table(variables(), with_services=True),
        "",
        "## The local platform (`kjournal-dev`, `scripts/dev`)",
        "",
        *_table(_dev_variables(), with_services=False),
        "",
    ]
    return "\n".join(lines)


def docs_path() -> Path:
    return find_repo_root() / "docs" / "configuration.md"


def check(path: Path | None = None) -> str | None:
    """None if `path` (default docs/configuration.md) is up to date, else what to do about it."""
    target = path or docs_path()
    current = target.read_text() if target.exists() else ""
    if current == render():
        return None
    return f"{target} is out of date: run `scripts/dev settings-docs --write`"
