"""The fold's quarantine check on an append's payload (`poison_reason`) refuses exactly the
appends `decode_append` cannot decode, with its reason: the read side's fold quarantines a
journal where the replicator, which decodes with `decode_append`, does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC
from datetime import datetime

import pytest
from kjournal.model import Append
from kjournal.model import Event
from kjournal.model import Events
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import PartitionOffset
from kjournal.model import PayloadType
from kjournal.model import SeqNr
from kjournal.model import SeqRange
from kjournal.model import TextPayload
from kjournal.wire import append_action
from kjournal.wire.append_events import DECODE_ERRORS
from kjournal.wire.append_events import decode_append
from kjournal.wire.append_events import poison_reason

EVENTS = Events(
    (Event(SeqNr(4), payload=JsonPayload({"n": 1})), Event(SeqNr(5), payload=TextPayload("x")))
)
APPEND = append_action(Key("journal", "a"), datetime(2026, 12, 7, tzinfo=UTC), EVENTS)


def _payload(data: bytes) -> Callable[[Append], Append]:
    return lambda append: replace(append, payload=data)


def _header_range(from_: int, to: int) -> Callable[[Append], Append]:
    return lambda append: replace(
        append, header=replace(append.header, range=SeqRange(SeqNr(from_), SeqNr(to)))
    )


CASES: dict[str, tuple[Callable[[Append], Append], bool]] = {
    "as written": (lambda append: append, False),
    "not JSON": (_payload(b'{"events": ['), True),
    "not UTF-8": (_payload(b'{"events": "\xff"}'), True),
    "an array, not a container": (_payload(b"[]"), True),
    "no events": (_payload(b'{"events": []}'), True),
    "a seqNr of 0": (_payload(b'{"events": [{"seqNr": 0}]}'), True),
    "seqNrs out of order": (_payload(b'{"events": [{"seqNr": 5}, {"seqNr": 4}]}'), True),
    "a payload type it does not know": (
        _payload(b'{"events": [{"seqNr": 4, "payloadType": "xml", "payload": "<a/>"}]}'),
        True,
    ),
    "events other than the header's range": (_header_range(4, 6), True),
    "a binary header over a JSON container": (
        lambda append: replace(
            append, header=replace(append.header, payload_type=PayloadType.BINARY)
        ),
        True,
    ),
}


@pytest.mark.parametrize(("change", "poisoned"), CASES.values(), ids=CASES.keys())
def test_the_fold_refuses_what_the_replicator_cannot_decode(
    change: Callable[[Append], Append], poisoned: bool
) -> None:
    append = change(APPEND)
    if not poisoned:
        assert decode_append(append, PartitionOffset(2, 17)).events
        assert poison_reason(append) is None
        return
    with pytest.raises(DECODE_ERRORS) as refused:
        decode_append(append, PartitionOffset(2, 17))
    assert poison_reason(append) == f"payload: {refused.value}"
