"""The aggregate recorder: stored events in kjournal journals, over the writer and the reader.

An aggregate is a journal of the recorder's topic (`Key(topic, str(originator_id))`), a version
is a seqNr (codec.py). An insert is one append per aggregate, unconditional: the journal's append
rule takes it when its seqNrs are all above the journal's, and answers a conflict (409) when the
journal already holds one of them; that, and an identical append answered as a replay on its
first try, is the library's IntegrityError, and nothing of it is written or read.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from itertools import groupby
from itertools import pairwise
from typing import Any
from uuid import UUID

from eventsourcing.persistence import AggregateRecorder
from eventsourcing.persistence import IntegrityError
from eventsourcing.persistence import OperationalError
from eventsourcing.persistence import ProgrammingError
from eventsourcing.persistence import StoredEvent
from kjournal.client import Client
from kjournal.client import RetryPolicy
from kjournal.errors import AppendRefused
from kjournal.errors import DeadlineExceeded
from kjournal.errors import InvalidInput
from kjournal.errors import KJournalError
from kjournal.errors import Unavailable
from kjournal.model import SEQ_NR_MAX
from kjournal.model import Events
from kjournal.model import Key
from kjournal.model.results import AppendResult

from kjournal_eventsourcing.codec import from_record
from kjournal_eventsourcing.codec import seq_nr
from kjournal_eventsourcing.codec import to_event

__all__ = ["KJournalAggregateRecorder"]

_SEND_ONCE = RetryPolicy(attempts=1)
_FIRST_WINDOW = 64  # seqNrs of a newest-first read's first window


class KJournalAggregateRecorder(AggregateRecorder):
    def __init__(
        self,
        topic: str,
        writer_url: str,
        reader_url: str,
        *,
        token: str | None = None,
        timeout_s: float = 30.0,
        retry_budget_s: float = 30.0,
    ) -> None:
        self.topic = topic
        self._retry_budget_s = retry_budget_s
        # Appends are resent here, not by the client: a replay then tells a resend of ours (the
        # first copy was taken: success) from a repeated insert (IntegrityError).
        self._writer = Client(writer_url, None, timeout=timeout_s, retry=_SEND_ONCE, token=token)
        self._reader = Client(None, reader_url, timeout=timeout_s, token=token)

    def close(self) -> None:
        self._writer.close()
        self._reader.close()

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        self._insert(stored_events)
        return None

    def _insert(self, stored_events: Sequence[StoredEvent]) -> list[tuple[AppendResult, int]]:
        """Each aggregate's append: where it was taken, and how many events it has."""
        batches = [
            (originator_id, list(events))
            for originator_id, events in groupby(stored_events, key=lambda e: e.originator_id)
        ]
        if len({str(originator_id) for originator_id, _ in batches}) < len(batches):
            raise ProgrammingError("the events of one aggregate must be next to each other")
        for originator_id, events in batches:
            versions = [event.originator_version for event in events]
            if any(later <= earlier for earlier, later in pairwise(versions)):
                raise IntegrityError(
                    f"the versions of {originator_id} must increase within an insert: {versions}"
                )
        # One append per aggregate: atomic for each, not across aggregates (docs/eventsourcing.md).
        return [
            (self._append(Key(self.topic, str(originator_id)), events), len(events))
            for originator_id, events in batches
        ]

    def _append(self, key: Key, events: list[StoredEvent]) -> AppendResult:
        batch = Events(tuple(to_event(event) for event in events))
        first_failure: float | None = None
        attempt = 0
        while True:
            attempt += 1
            try:
                result = self._writer.append(key, batch)
            except AppendRefused as exc:
                raise IntegrityError(f"{key}: {exc}") from exc
            except InvalidInput as exc:
                raise ProgrammingError(f"{key}: {exc}") from exc
            except (Unavailable, DeadlineExceeded) as exc:
                first_failure = first_failure or time.monotonic()
                if time.monotonic() - first_failure > self._retry_budget_s:
                    raise OperationalError(
                        f"{key}: the append's outcome is unknown after "
                        f"{self._retry_budget_s:g} s of retries: {exc}"
                    ) from exc
                time.sleep(min(0.2 * 2 ** (attempt - 1), 5.0))
                continue
            except KJournalError as exc:
                raise OperationalError(f"{key}: {exc}") from exc
            if result.replay and attempt == 1:
                raise IntegrityError(f"{key}: these versions are already recorded")
            return result

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        key = Key(self.topic, str(originator_id))
        from_ = 1 if gt is None else seq_nr(gt) + 1
        to = SEQ_NR_MAX if lte is None else seq_nr(lte)
        if to < from_ or (limit is not None and limit <= 0):
            return []
        try:
            if desc:
                return self._newest_first(originator_id, key, from_, to, limit)
            records = self._reader.read(key, from_, to, limit=limit)
            return [from_record(originator_id, record) for record in records]
        except KJournalError as exc:
            raise OperationalError(f"{key}: {exc}") from exc

    def _newest_first(
        self, originator_id: UUID | str, key: Key, from_: int, to: int, limit: int | None
    ) -> list[StoredEvent]:
        """Newest first without reading the whole range: from the journal's seqNr down, in
        windows that double (a snapshot store's `limit=1` read is one or a few short reads)."""
        pointer = self._reader.pointer(key)
        if pointer is None:
            return []
        high = min(to, pointer)
        window = min(limit or _FIRST_WINDOW, _FIRST_WINDOW)
        stored: list[StoredEvent] = []
        while high >= from_ and (limit is None or len(stored) < limit):
            low = max(from_, high - window + 1)
            records = list(self._reader.read(key, low, high))
            stored.extend(from_record(originator_id, record) for record in reversed(records))
            high = low - 1
            window *= 2
        return stored if limit is None else stored[:limit]
