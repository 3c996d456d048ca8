"""docs/configuration.md is generated from the settings classes and cannot drift from them."""

from __future__ import annotations

import os

import pytest
from kjournal_dev.generate import settings_docs
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_replicator.settings import ReplicatorSettings
from kjournal_writer.settings import Settings as WriterSettings
from pydantic import BaseModel

CLASSES: dict[str, type[BaseModel]] = {
    "writer": WriterSettings,
    "reader": ReaderSettings,
    "replicator": ReplicatorSettings,
}


def test_the_file_is_what_the_classes_generate():
    assert settings_docs.check() is None


def test_every_variable_says_what_it_means():
    missing = [v.name for v in settings_docs.variables() if not v.meaning]
    assert missing == []


def _field(settings: BaseModel, name: str) -> object:
    value: object = settings
    for part in name.removeprefix("KJOURNAL_").lower().split("__"):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("service", sorted(CLASSES))
def test_every_numeric_variable_reaches_its_field(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Setting a documented variable changes exactly the field it names (a misspelt top-level
    variable would otherwise be ignored without a word)."""
    for name in [k for k in os.environ if k.startswith("KJOURNAL_")]:
        monkeypatch.delenv(name)
    checked = 0
    for variable in settings_docs.service_variables(service):
        if variable.type not in ("int", "float") or variable.default in ("", "(computed)"):
            continue
        default = float(variable.default.strip("`"))
        value = str(int(default) + 1) if variable.type == "int" else str(default + 0.5)
        with monkeypatch.context() as env:
            env.setenv(variable.name, value)
            settings = CLASSES[service]()
        assert float(_field(settings, variable.name)) == float(value), variable.name  # type: ignore[arg-type]
        checked += 1
    assert checked > 5
