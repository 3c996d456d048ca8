"""Conditional appends over HTTP (RFC 9110 §13): `If-Match: "<seqNr>"`, `If-None-Match: *`, and
the `ETag: "<seqNr>"` of a journal.

A journal's entity tag is its seqNr, quoted; `"0"` stands for a journal that does not exist, so
`If-Match: "0"` means the same as `If-None-Match: *`. An unquoted seqNr (`If-Match: 5`) is taken
as the tag it obviously means. The condition travels in the append's
record as `expect` (kjournal/fold/append_rule.py): None, 0, or the seqNr the journal must have.
"""

from __future__ import annotations

import re

from kjournal.errors import InvalidInput
from kjournal.model.seq_nr import SEQ_NR_MAX

__all__ = ["condition_headers", "entity_tag", "parse_condition"]

_ENTITY_TAG = re.compile(r'"(0|[1-9][0-9]{0,18})"|(0|[1-9][0-9]{0,18})')


def entity_tag(seq_nr: int | None) -> str:
    """The ETag of a journal at `seq_nr` (None or 0: no journal)."""
    return f'"{seq_nr or 0}"'


def parse_condition(if_match: str | None, if_none_match: str | None) -> int | None:
    """The `expect` of an append request's condition headers (InvalidInput if malformed)."""
    if if_match is not None and if_none_match is not None:
        raise InvalidInput("give If-Match or If-None-Match, not both")
    if if_none_match is not None:
        if if_none_match.strip() != "*":
            raise InvalidInput("an append takes If-None-Match: * only (the journal must not exist)")
        return 0
    if if_match is None:
        return None
    match = _ENTITY_TAG.fullmatch(if_match.strip())
    if match is None or int(match[1] or match[2]) >= SEQ_NR_MAX:
        raise InvalidInput(
            f'If-Match takes one strong entity tag "<seqNr>" (0 to {SEQ_NR_MAX - 1}): '
            f"the journal's seqNr, as its ETag gives it; got {if_match!r}"
        )
    return int(match[1] or match[2])


def condition_headers(expected_seq_nr: int | None) -> dict[str, str]:
    """The request headers of an append expecting the journal at `expected_seq_nr` (0: absent)."""
    if expected_seq_nr is None:
        return {}
    if expected_seq_nr == 0:
        return {"if-none-match": "*"}
    return {"if-match": entity_tag(expected_seq_nr)}
