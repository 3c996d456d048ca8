"""ExpireAfter: how long after its last append a journal may be purged, as a Scala duration."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from datetime import timedelta

from kjournal.errors import InvalidDuration

# Scala's TimeUnit names as FiniteDuration.toString spells them, coarsest first.
NANOS_PER_UNIT: dict[str, int] = {
    "day": 86_400_000_000_000,
    "hour": 3_600_000_000_000,
    "minute": 60_000_000_000,
    "second": 1_000_000_000,
    "millisecond": 1_000_000,
    "microsecond": 1_000,
    "nanosecond": 1,
}

# FiniteDuration's range: at most Long.MaxValue nanoseconds (about 292 years).
MAX_NANOS = 2**63 - 1


@dataclass(frozen=True, slots=True, order=True)
class ExpireAfter:
    """A positive finite duration, kept in nanoseconds like Scala's FiniteDuration.

    `unit` is the unit the duration was given in, if any (one of NANOS_PER_UNIT). It takes no part
    in equality or ordering; it only lets the wire format write `"60 minutes"` back as
    `"60 minutes"` rather than `"1 hour"`, as Scala's FiniteDuration does.
    """

    nanos: int
    unit: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.nanos, bool) or not isinstance(self.nanos, int):
            raise InvalidDuration(
                f"expireAfter must be a whole number of nanoseconds, got {self.nanos!r}"
            )
        if not 0 < self.nanos <= MAX_NANOS:
            raise InvalidDuration(
                f"expireAfter must be a positive duration of at most {MAX_NANOS} nanoseconds, "
                f"got {self.nanos}"
            )
        if self.unit is not None:
            size = NANOS_PER_UNIT.get(self.unit)
            if size is None:
                raise InvalidDuration(f"unknown duration unit {self.unit!r}")
            if self.nanos % size:
                raise InvalidDuration(
                    f"{self.nanos} nanoseconds is not a whole number of {self.unit}s"
                )

    @classmethod
    def of(cls, length: int, unit: str) -> ExpireAfter:
        """`ExpireAfter.of(30, "minutes")`; the unit is kept for formatting."""
        unit = unit.rstrip("s") if unit.endswith("s") and unit[:-1] in NANOS_PER_UNIT else unit
        if unit not in NANOS_PER_UNIT:
            raise InvalidDuration(f"unknown duration unit {unit!r}")
        if isinstance(length, bool) or not isinstance(length, int):
            raise InvalidDuration(f"duration length must be an integer, got {length!r}")
        return cls(length * NANOS_PER_UNIT[unit], unit)

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

    def length_and_unit(self) -> tuple[int, str]:
        """(length, unit) in the unit it was given in, else the coarsest exact one."""
        if self.unit is not None:
            return self.nanos // NANOS_PER_UNIT[self.unit], self.unit
        return self.coarsest()
