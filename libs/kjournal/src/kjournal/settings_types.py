"""Validators shared by the settings sections of the core, the services and their jobs."""

from __future__ import annotations

from pydantic import AfterValidator
from pydantic import BeforeValidator

__all__ = ["CommaSeparated", "non_empty"]


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


CommaSeparated = BeforeValidator(_split_commas)
"""A tuple field's validator that also takes one comma-separated string (an environment
variable): `KJOURNAL_EXPIRY__TOPICS=a, b` is `("a", "b")`; blank parts are dropped."""


def non_empty(message: str) -> AfterValidator:
    """A tuple field's validator refusing an empty one with `message`."""

    def check(value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError(message)
        return value

    return AfterValidator(check)
