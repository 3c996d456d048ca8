"""SeqNr (1-based int64 position of an event in its journal) and SeqRange."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

from kjournal.errors import InvalidSeqNr

# A plain int at run time (events are hot), a distinct type for the checker.
SeqNr = NewType("SeqNr", int)

SEQ_NR_MIN = SeqNr(1)
SEQ_NR_MAX = SeqNr(2**63 - 1)


def seq_nr(value: int) -> SeqNr:
    """Validate `value` as a SeqNr (1 ≤ value ≤ 2^63-1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSeqNr(f"seqNr must be an integer, got {value!r}")
    if not 1 <= value <= SEQ_NR_MAX:
        raise InvalidSeqNr(f"seqNr must be between 1 and {SEQ_NR_MAX}, got {value}")
    return SeqNr(value)


@dataclass(frozen=True, slots=True)
class SeqRange:
    """An inclusive range `from_ ≤ to` of seqNrs; JSON `{"from": n, "to": m}`."""

    from_: SeqNr
    to: SeqNr

    def __post_init__(self) -> None:
        seq_nr(self.from_)
        seq_nr(self.to)
        if self.from_ > self.to:
            raise InvalidSeqNr(f"range from {self.from_} is after to {self.to}")

    @classmethod
    def single(cls, value: int) -> SeqRange:
        return cls(SeqNr(value), SeqNr(value))

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.from_ <= value <= self.to

    def __str__(self) -> str:
        return str(self.from_) if self.from_ == self.to else f"{self.from_}..{self.to}"
