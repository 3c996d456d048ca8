"""The Helm chart's settings values, generated from the services' settings classes.

Each component's `KJOURNAL_*` variables are values of the chart under the same names, nested as
the variables nest: `writer.settings.http.max_body_bytes` is `KJOURNAL_HTTP__MAX_BODY_BYTES` of the
writer, `settings.kafka.bootstrap_servers` the `KJOURNAL_KAFKA__BOOTSTRAP_SERVERS` of every
component that talks to Kafka. Two files of the chart come from the classes, so neither can drift:

* `helm/kjournal/files/settings.json`: per component, each variable the chart renders from values
  (its name, its path under `settings`, and how its value is written: text, comma list or JSON);
* the `$defs` of `helm/kjournal/values.schema.json` named `*Settings`: what `helm` accepts under
  each `settings` (types, bounds, choices; an unknown name is refused).

Also copied into the chart, which can read only its own files: the Grafana dashboards of
`deploy/grafana/` (as `files/dashboards/`), for `metrics.grafanaDashboard`.

A few variables are the chart's own (listen address and port, credentials, the Spark master and
checkpoint): they come from other values, listed in OWNED with the value that sets them.
`kjournal-dev chart-values` checks both files (a test runs it); `--write` regenerates them.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Literal

import annotated_types
import yaml
from pydantic import BaseModel
from pydantic import SecretStr

from kjournal_dev.config import find_repo_root
from kjournal_dev.generate.settings_docs import _settings_classes

__all__ = ["OWNED", "SHARED_SECTIONS", "ChartVariable", "chart_variables", "check", "write"]

PREFIX = "KJOURNAL_"
COMPONENTS = ("writer", "reader", "replicator", "migrate", "expiry")
# Sections set once under the top-level `settings` for every component that has them.
SHARED_SECTIONS = ("kafka", "cassandra", "auth")

# Variable → the value (or rule) that sets it instead of `<component>.settings`.
OWNED: dict[str, str] = {
    "KJOURNAL_HTTP__HOST": "always 0.0.0.0: pods are reached on their own address",
    "KJOURNAL_HTTP__PORT": "the container port: 8080 (writer, reader), 9400 (replicator)",
    "KJOURNAL_HTTP__ENABLED": "always on for the replicator: its probes and metrics use it",
    "KJOURNAL_KAFKA__SASL_USERNAME": "`kafka.existingSecret` (key `usernameKey`); the expiry "
    "job's `expiry.kafkaSecret` when set",
    "KJOURNAL_KAFKA__SASL_PASSWORD": "`kafka.existingSecret` (key `passwordKey`); the expiry "
    "job's `expiry.kafkaSecret` when set",
    "KJOURNAL_CASSANDRA__USERNAME": "`<component>.cassandraSecret` (key `usernameKey`)",
    "KJOURNAL_CASSANDRA__PASSWORD": "`<component>.cassandraSecret` (key `passwordKey`)",
    "KJOURNAL_AUTH__JWKS_FILE": "`auth.jwksSecret`: its key `key`, mounted as a file",
    "KJOURNAL_SPARK__MASTER": "`replicator.mode` (and `replicator.local.threads`)",
    "KJOURNAL_SPARK__CHECKPOINT_LOCATION": "`replicator.checkpoint` (a PVC, or `uri`)",
    "KJOURNAL_READER__URL": "the writer asks the release's reader Service "
    "(`http://<release>-reader:<reader.service.port>`)",
}
# Rendered by the chart from the value merged with its own entries (the Spark on Kubernetes conf).
MERGED = frozenset({"KJOURNAL_SPARK__CONF"})

Kind = Literal["text", "list", "json"]


@dataclass(frozen=True)
class ChartVariable:
    env: str
    path: tuple[str, ...]
    kind: Kind
    schema: dict[str, Any]


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            bounds["minimum"] = item.ge
        elif isinstance(item, annotated_types.Gt):
            bounds["exclusiveMinimum"] = item.gt
        elif isinstance(item, annotated_types.Le):
            bounds["maximum"] = item.le
        elif isinstance(item, annotated_types.Lt):
            bounds["exclusiveMaximum"] = item.lt
    return bounds


def _leaf(annotation: Any, metadata: list[Any]) -> tuple[Kind, dict[str, Any]]:
    """How a value of this type is written into its variable, and its JSON schema."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kind, schema = _leaf(next(arg for arg in args if arg is not type(None)), metadata)
        if type(None) in args:
            schema = {"anyOf": [schema, {"type": "null"}]}
        return kind, schema
    if origin is Literal:
        return "text", {"enum": list(args)}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "text", {"enum": [member.value for member in annotation]}
    if origin in (tuple, list, set, frozenset):
        # A YAML list or the comma-separated text the variable itself takes.
        return "list", {"type": ["array", "string"], "items": {"type": "string"}}
    if origin is dict:
        _, value_schema = _leaf(args[1], []) if len(args) == 2 else ("text", {})
        return "json", {"type": "object", "additionalProperties": value_schema}
    if annotation is bool:
        return "text", {"type": "boolean"}
    if annotation is int:
        return "text", {"type": "integer", **_bounds(metadata)}
    if annotation is float:
        return "text", {"type": "number", **_bounds(metadata)}
    if annotation in (str, Path):
        return "text", {"type": "string"}
    raise TypeError(f"no chart value type for {annotation!r}")


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_secret(annotation: Any) -> bool:
    return annotation is SecretStr or SecretStr in typing.get_args(annotation)


def _walk(model: type[BaseModel], path: tuple[str, ...]) -> Iterator[ChartVariable]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if _is_section(annotation):
            assert isinstance(annotation, type)
            yield from _walk(annotation, (*path, name))
            continue
        env = PREFIX + "__".join(part.upper() for part in (*path, name))
        if _is_secret(annotation):
            assert env in OWNED, f"{env} is a secret: the chart must take it from a Secret"
            yield ChartVariable(env, (*path, name), "text", {})
            continue
        kind, schema = _leaf(annotation, list(info.metadata))
        description = (info.description or "").strip().replace("\n", " ")
        schema = {"description": f"{env}: {description}" if description else env, **schema}
        yield ChartVariable(env, (*path, name), kind, schema)


def all_variables(component: str) -> list[ChartVariable]:
    """Every variable the component reads, the chart's own included."""
    return list(_walk(_settings_classes()[component], ()))


def chart_variables(component: str) -> list[ChartVariable]:
    """The variables a user sets through values (every one but the chart's own)."""
    return [v for v in all_variables(component) if v.env not in OWNED]


def _object(variables: list[ChartVariable], depth: int = 0) -> dict[str, Any]:
    """The nested object schema of these variables (their paths below `depth`)."""
    properties: dict[str, Any] = {}
    sections: dict[str, list[ChartVariable]] = {}
    for variable in variables:
        if len(variable.path) == depth + 1:
            properties[variable.path[depth]] = variable.schema
        else:
            sections.setdefault(variable.path[depth], []).append(variable)
    for name, members in sections.items():
        properties[name] = _object(members, depth + 1)
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": dict(sorted(properties.items())),
    }


def settings_defs() -> dict[str, Any]:
    """The `$defs` of values.schema.json that describe each `settings` value."""
    defs = {f"{c}Settings": _object(chart_variables(c)) for c in COMPONENTS}
    shared: list[ChartVariable] = []
    seen: set[str] = set()
    for component in COMPONENTS:
        for variable in chart_variables(component):
            if variable.path[0] in SHARED_SECTIONS and variable.env not in seen:
                seen.add(variable.env)
                shared.append(variable)
    defs["sharedSettings"] = _object(shared)
    return defs


def settings_table() -> dict[str, list[dict[str, Any]]]:
    """files/settings.json: what the templates render, per component."""
    return {
        component: [
            {"env": v.env, "path": list(v.path), "kind": v.kind}
            for v in chart_variables(component)
            if v.env not in MERGED
        ]
        for component in COMPONENTS
    }


def chart_dir() -> Path:
    return find_repo_root() / "helm" / "kjournal"


_TABLE_START = "<!-- values table: generated by `scripts/dev chart-values --write` -->"
_TABLE_END = "<!-- end of the values table -->"


def _type_of(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(str(choice) for choice in schema["enum"])
    if "$ref" in schema:
        return "object"
    kind = schema.get("type", "")
    if isinstance(kind, list):
        return " or ".join(kind)
    if "anyOf" in schema:
        return " or ".join(_type_of(option) for option in schema["anyOf"])
    return str(kind)


def _value_rows(values: Any, schema: dict[str, Any], prefix: str) -> Iterator[list[str]]:
    properties = schema.get("properties", {})
    for key, default in values.items():
        path = f"{prefix}{key}"
        child = properties.get(key, {})
        nested = child.get("properties")
        if isinstance(default, dict) and default and nested and key != "settings":
            if child.get("description"):
                yield [f"`{path}`", "object", "", child["description"]]
            yield from _value_rows(default, child, f"{path}.")
            continue
        shown = json.dumps(default) if default not in ("", None) else ""
        yield [
            f"`{path}`",
            _type_of(child),
            f"`{shown}`" if shown else "",
            child.get("description", ""),
        ]


def values_table(chart: Path, schema: dict[str, Any]) -> list[str]:
    """The docs' table of every value in values.yaml, described by values.schema.json."""
    values = yaml.safe_load((chart / "values.yaml").read_text())
    lines = ["| value | type | default | meaning |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in _value_rows(values, schema, "")]
    lines += [
        "",
        "Set by the chart, not through `settings` (`helm` refuses them there):",
        "",
        "| variable | comes from |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {source} |" for name, source in OWNED.items()]
    return [_TABLE_START, "", *lines, "", _TABLE_END]


def dashboards_dir() -> Path:
    return find_repo_root() / "deploy" / "grafana"


def docs_path() -> Path:
    return find_repo_root() / "docs" / "kubernetes.md"


def _with_table(text: str, table: list[str]) -> str:
    if _TABLE_START not in text or _TABLE_END not in text:
        raise ValueError(
            f"docs/kubernetes.md lacks the markers {_TABLE_START!r} ... {_TABLE_END!r}"
        )
    head, rest = text.split(_TABLE_START, 1)
    _, tail = rest.split(_TABLE_END, 1)
    return head + "\n".join(table) + tail


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"


def _rendered(chart: Path) -> dict[Path, str]:
    """Each generated file's expected text."""
    schema_path = chart / "values.schema.json"
    schema = json.loads(schema_path.read_text())
    defs = {k: v for k, v in schema.get("$defs", {}).items() if not k.endswith("Settings")}
    schema["$defs"] = {**defs, **settings_defs()}
    rendered = {
        chart / "files" / "settings.json": _dump(settings_table()),
        schema_path: _dump(schema),
    }
    for dashboard in sorted(dashboards_dir().glob("*.json")):
        rendered[chart / "files" / "dashboards" / dashboard.name] = dashboard.read_text()
    docs = docs_path()
    if docs.exists():
        rendered[docs] = _with_table(docs.read_text(), values_table(chart, schema))
    return rendered


def check(chart: Path | None = None) -> str | None:
    """None if the chart's generated parts match the settings classes, else what to do."""
    stale = [
        path
        for path, text in _rendered(chart or chart_dir()).items()
        if not path.exists() or path.read_text() != text
    ]
    if not stale:
        return None
    names = ", ".join(str(path) for path in stale)
    return f"{names} out of date: run `scripts/dev chart-values --write`"


def write(chart: Path | None = None) -> list[Path]:
    written = []
    for path, text in _rendered(chart or chart_dir()).items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written.append(path)
    return written
