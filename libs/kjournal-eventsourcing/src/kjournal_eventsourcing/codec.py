"""A stored event as a kjournal event, and back: the aggregate is the journal, the version is
the seqNr less one, the event's class topic and its state go into a JSON payload.

The event's class topic is also the kjournal event's one tag, so a topic feed (and the
application recorder's `topics=`) filters by it before payloads are decoded. The state is kept
exactly as the library made it (transcoded, maybe compressed or encrypted): as
text when it is UTF-8 (the JSON transcoder's output, readable with `kjournal read`), else as
base64.
"""

from __future__ import annotations

import base64
from typing import Any
from uuid import UUID

from eventsourcing.persistence import DataError
from eventsourcing.persistence import Notification
from eventsourcing.persistence import StoredEvent
from kjournal.model import Event
from kjournal.model import EventRecord
from kjournal.model import JsonPayload
from kjournal.model import SeqNr

__all__ = [
    "from_record",
    "originator_id_of",
    "seq_nr",
    "to_event",
    "to_notification",
    "version",
]


def seq_nr(version: int) -> int:
    """The seqNr of an originator version (versions start at 0 or 1; seqNrs at 1)."""
    if version < 0:
        raise DataError(f"an originator version cannot be negative: {version}")
    return version + 1


def version(seq_nr: int) -> int:
    return seq_nr - 1


def to_event(stored: StoredEvent) -> Event:
    body: dict[str, Any] = {"topic": stored.topic}
    try:
        body["state"] = stored.state.decode("utf-8")
    except UnicodeDecodeError:
        body["stateBase64"] = base64.b64encode(stored.state).decode("ascii")
    return Event(
        SeqNr(seq_nr(stored.originator_version)),
        tags=frozenset({stored.topic}),
        payload=JsonPayload(body),
    )


def from_record(originator_id: UUID | str, record: EventRecord) -> StoredEvent:
    payload = record.event.payload
    if not isinstance(payload, JsonPayload):
        raise DataError(f"event {record.event.seq_nr} of {originator_id} is not a stored event")
    body = payload.value
    topic = body.get("topic") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(topic, str):
        raise DataError(f"event {record.event.seq_nr} of {originator_id} has no event topic")
    if isinstance(text := body.get("state"), str):
        state = text.encode("utf-8")
    elif isinstance(encoded := body.get("stateBase64"), str):
        state = base64.b64decode(encoded)
    else:
        raise DataError(f"event {record.event.seq_nr} of {originator_id} has no state")
    return StoredEvent(
        originator_id=originator_id,
        originator_version=version(record.event.seq_nr),
        topic=topic,
        state=state,
    )


def originator_id_of(journal_id: str) -> UUID | str:
    """A journal id as the library's originator id: a UUID when it is one written canonically
    (as `str(uuid)` writes it), else the text."""
    try:
        parsed = UUID(journal_id)
    except ValueError:
        return journal_id
    return parsed if str(parsed) == journal_id else journal_id


def to_notification(journal_id: str, record: EventRecord, notification_id: int) -> Notification:
    stored = from_record(originator_id_of(journal_id), record)
    return Notification(
        id=notification_id,
        originator_id=stored.originator_id,
        originator_version=stored.originator_version,
        topic=stored.topic,
        state=stored.state,
    )
