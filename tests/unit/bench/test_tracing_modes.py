"""The benches' tracing modes (bench/_tracing.py): a run without `--tracing` starts its services
with the environment as it is."""

import pytest

from bench._tracing import modes
from bench._tracing import tracing_env


def test_no_mode_leaves_the_environment_alone() -> None:
    assert tracing_env("") == {}


def test_off_disables_the_sdk_and_on_samples_everything() -> None:
    assert tracing_env("off") == {"OTEL_SDK_DISABLED": "true"}
    assert tracing_env("on")["OTEL_TRACES_SAMPLER"] == "parentbased_always_on"


def test_modes_are_parsed_in_order_and_an_unknown_one_is_refused() -> None:
    assert modes("off, on,") == ["off", "on"]
    with pytest.raises(SystemExit, match="unknown tracing mode 'sometimes'"):
        modes("sometimes")
