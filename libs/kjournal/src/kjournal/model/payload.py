"""Event payloads: binary, text or JSON, and the JSON value type."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"


class PayloadType(StrEnum):
    BINARY = "binary"
    TEXT = "text"
    JSON = "json"


@dataclass(frozen=True, slots=True)
class BinaryPayload:
    value: bytes

    @property
    def type(self) -> PayloadType:
        return PayloadType.BINARY


@dataclass(frozen=True, slots=True)
class TextPayload:
    value: str

    @property
    def type(self) -> PayloadType:
        return PayloadType.TEXT


@dataclass(frozen=True, slots=True)
class JsonPayload:
    value: JsonValue

    @property
    def type(self) -> PayloadType:
        return PayloadType.JSON


Payload: TypeAlias = BinaryPayload | TextPayload | JsonPayload
