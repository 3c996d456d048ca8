"""Event payloads: binary, text or JSON, and the JSON value type."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar
from typing import Final
from typing import NoReturn
from typing import TypeAlias

from kjournal.errors import PayloadFormatError

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"


class PayloadType(StrEnum):
    BINARY = "binary"
    TEXT = "text"
    JSON = "json"


@dataclass(frozen=True, slots=True)
class BinaryPayload:
    type: ClassVar[PayloadType] = PayloadType.BINARY
    value: bytes


@dataclass(frozen=True, slots=True)
class TextPayload:
    type: ClassVar[PayloadType] = PayloadType.TEXT
    value: str


_UNPARSED: Final = object()
_json_decoder = json.JSONDecoder(parse_constant=lambda name: _reject(name))


def _reject(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


class JsonPayload:
    """A JSON payload: built from a value, or from stored JSON text that is parsed on first use.

    Reads from Cassandra hand out payloads as their stored text (`raw_text`), so a journal can be
    streamed, or re-encoded as JSON, without parsing every event. Treat it as immutable.
    """

    __slots__ = ("_text", "_value")
    __match_args__ = ("value",)
    type: ClassVar[PayloadType] = PayloadType.JSON

    def __init__(self, value: JsonValue) -> None:
        self._value: object = value
        self._text: str | None = None

    @classmethod
    def from_text(cls, text: str) -> JsonPayload:
        """A payload of already validated JSON text (as stored); parsed lazily."""
        payload = cls.__new__(cls)
        payload._value = _UNPARSED
        payload._text = text
        return payload

    @property
    def value(self) -> JsonValue:
        if self._value is _UNPARSED:
            assert self._text is not None
            try:
                self._value = _json_decoder.decode(self._text)
            except ValueError as exc:
                raise PayloadFormatError(f"stored JSON payload is not valid JSON: {exc}") from exc
        return self._value  # type: ignore[return-value]

    @property
    def raw_text(self) -> str | None:
        """The JSON text it was read as, if any (None when built from a value)."""
        return self._text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JsonPayload):
            return NotImplemented
        if self._text is not None and self._text == other._text:
            return True
        return bool(self.value == other.value)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JsonPayload({self.value!r})"


Payload: TypeAlias = BinaryPayload | TextPayload | JsonPayload
