"""ExpireAfter: how long after its last append a journal may be purged, as a Scala duration."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from kjournal.errors import InvalidDuration

NANOS_PER_UNIT: dict[str, int] = {
    "day": 86_400_000_000_000,
    "hour": 3_600_000_000_000,
    "minute": 60_000_000_000,
    "second": 1_000_000_000,
    "millisecond": 1_000_000,
    "microsecond": 1_000,
    "nanosecond": 1,
}


@dataclass(frozen=True, slots=True, order=True)
class ExpireAfter:
    """A positive finite duration, kept in nanoseconds like Scala's FiniteDuration."""

    nanos: int

    def __post_init__(self) -> None:
        if isinstance(self.nanos, bool) or not isinstance(self.nanos, int) or self.nanos <= 0:
            raise InvalidDuration(f"expireAfter must be a positive duration, got {self.nanos!r}")

    @classmethod
    def of(cls, length: int, unit: str) -> ExpireAfter:
        unit = unit.rstrip("s") if unit.endswith("s") and unit[:-1] in NANOS_PER_UNIT else unit
        if unit not in NANOS_PER_UNIT:
            raise InvalidDuration(f"unknown duration unit {unit!r}")
        return cls(length * NANOS_PER_UNIT[unit])

    @classmethod
    def from_timedelta(cls, value: timedelta) -> ExpireAfter:
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        return cls(micros * 1_000)

    @classmethod
    def from_millis(cls, millis: int) -> ExpireAfter:
        return cls(millis * 1_000_000)

    def to_timedelta(self) -> timedelta:
        return timedelta(microseconds=self.nanos // 1_000)

    def coarsest(self) -> tuple[int, str]:
        """(length, unit) in the largest unit that divides it exactly, as Scala's toCoarsest."""
        for unit, size in NANOS_PER_UNIT.items():
            if self.nanos % size == 0:
                return self.nanos // size, unit
        raise AssertionError("nanosecond divides everything")
