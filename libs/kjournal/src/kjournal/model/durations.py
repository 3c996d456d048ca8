"""`expireAfter` on the wire: Scala FiniteDuration strings ("1 day", "30 minutes").

Reading follows scala.concurrent.duration.Duration(String): whitespace anywhere is dropped, the
trailing letters name the unit (d/day/days, h/hr/hrs/hour/hours, m/min/mins/minute/minutes,
s/sec/secs/second/seconds, ms/milli/millis/millisecond/milliseconds, µs/micro/micros/microsecond/
microseconds, ns/nano/nanos/nanosecond/nanoseconds; case-sensitive), the rest is a long (the unit is
kept) or a double (rounded to nanoseconds, coarsest unit). A JSON number means milliseconds.
Writing follows FiniteDuration.toString: "<length> <unit>", plural unless the length is 1.
"""

from __future__ import annotations

import math
import re

from kjournal.errors import InvalidDuration
from kjournal.model.expire_after import MAX_NANOS
from kjournal.model.expire_after import NANOS_PER_UNIT
from kjournal.model.expire_after import ExpireAfter
from kjournal.model.payload import JsonValue

_LABELS = {
    "day": "d day",
    "hour": "h hr hour",
    "minute": "m min minute",
    "second": "s sec second",
    "millisecond": "ms milli millisecond",
    "microsecond": "µs micro microsecond",
    "nanosecond": "ns nano nanosecond",
}


def _unit_by_label() -> dict[str, str]:
    # The first label of each unit has no plural ("d", not "ds"); the others do.
    table: dict[str, str] = {}
    for unit, labels in _LABELS.items():
        first, *rest = labels.split()
        table[first] = unit
        for label in rest:
            table[label] = unit
            table[label + "s"] = unit
    return table


_UNIT_BY_LABEL = _unit_by_label()
_LONG = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_LONG_MIN = -(2**63)
# Java's Character.isWhitespace is Unicode whitespace minus the no-break spaces (and NEL).
_NOT_JAVA_WHITESPACE = frozenset("\x85\xa0\u2007\u202f")


def format_duration(value: ExpireAfter) -> str:
    """`"1 day"`, `"30 minutes"`: as Scala's FiniteDuration.toString."""
    length, unit = value.length_and_unit()
    return f"{length} {unit}" if length == 1 else f"{length} {unit}s"


def parse_duration(text: str) -> ExpireAfter:
    """Parse a Scala duration string; InvalidDuration if it is not one, or not positive."""
    compact = "".join(c for c in text if not c.isspace() or c in _NOT_JAVA_WHITESPACE)
    label_start = len(compact)
    while label_start > 0 and compact[label_start - 1].isalpha():
        label_start -= 1
    unit = _UNIT_BY_LABEL.get(compact[label_start:])
    number = compact[:label_start]
    if unit is None or not number:
        raise InvalidDuration(f"not a finite duration: {text!r}")
    size = NANOS_PER_UNIT[unit]
    if _LONG.fullmatch(number):
        length = int(number)
        if _LONG_MIN <= length <= MAX_NANOS:
            if abs(length) > MAX_NANOS // size:
                raise InvalidDuration(f"duration out of range (about 292 years at most): {text!r}")
            return ExpireAfter(length * size, unit)
    return ExpireAfter(_nanos_from_double(_parse_double(number, text) * float(size), text))


def expire_after_to_json(value: ExpireAfter) -> str:
    return format_duration(value)


def expire_after_from_json(value: JsonValue) -> ExpireAfter | None:
    """A duration string, or a number of milliseconds; null means absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return parse_duration(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > MAX_NANOS // 1_000_000:
            raise InvalidDuration(f"expireAfter of {value} milliseconds is out of range")
        return ExpireAfter(value * 1_000_000, "millisecond")
    raise InvalidDuration(f"expireAfter must be a duration string or milliseconds, got {value!r}")


def _parse_double(number: str, text: str) -> float:
    if _DECIMAL.fullmatch(number):
        return float(number)
    if _HEX_FLOAT.fullmatch(number):
        return float.fromhex(number)
    raise InvalidDuration(f"not a finite duration: {text!r}")


def _nanos_from_double(nanos: float, text: str) -> int:
    # Duration.fromNanos(Double): NaN/infinite are not finite durations; Math.round saturates.
    if not math.isfinite(nanos) or nanos > float(MAX_NANOS) or nanos < float(_LONG_MIN):
        raise InvalidDuration(f"duration out of range (about 292 years at most): {text!r}")
    return max(_LONG_MIN, min(MAX_NANOS, math.floor(nanos + 0.5)))
