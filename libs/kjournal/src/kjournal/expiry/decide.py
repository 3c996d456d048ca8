"""Whether one expired journal is purged now: a pure function of its head and its tail."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from datetime import date

from kjournal.model import Action
from kjournal.model import Append
from kjournal.model import Purge
from kjournal.model.head import JournalHead

__all__ = ["Skip", "verdict"]


class Skip(enum.Enum):
    """Why a journal found expired is not purged (the metric label and the report's words)."""

    GONE = "gone"
    """No head any more: purged meanwhile, by a run, a writer or an operator."""
    NOT_EXPIRED = "not-expired"
    """Its head has no expiry now, or one that has not come: it was appended to since (the
    replicator moved `expire_on`) or its appends dropped `expireAfter`."""
    APPENDED = "appended"
    """An append of it waits in Kafka, not yet replicated: it is in use again."""
    PURGE_PENDING = "purge-pending"
    """A purge of it waits in Kafka, not yet replicated: an earlier run's, or a writer's."""
    UNREADABLE = "unreadable"
    """A record of it waiting in Kafka cannot be decoded (the replicator quarantines the journal;
    an operator resolves it, docs/replication.md §6)."""


def verdict(head: JournalHead | None, tail: Iterable[Action], today: date) -> Skip | None:
    """None when the journal is to be purged now, else why not.

    head: the journal's head, read after the partition's pointer2 (so the tail, read after both,
        holds every action the head does not cover).
    tail: the journal's actions in Kafka after pointer2, in offset order.
    today: the date in the expiry time zone (the zone `expire_on` dates are written in); a
        journal whose `expire_on` is today or earlier has expired.
    """
    if head is None:
        return Skip.GONE
    if head.expiry is None or head.expiry.on > today:
        return Skip.NOT_EXPIRED
    pending = False
    for action in tail:
        if isinstance(action, Append):
            return Skip.APPENDED
        if isinstance(action, Purge):
            pending = True
    return Skip.PURGE_PENDING if pending else None
