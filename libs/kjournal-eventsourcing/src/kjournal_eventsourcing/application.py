"""The application recorder: an application's events on a single-partition kjournal topic, its
notification log the topic's feed (docs/eventsourcing.md).

The aggregates are journals of the topic, as for the aggregate recorder; the application
sequence is the order of the topic's one partition, each event's notification id its position
(notification_ids.py). `select_notifications` is a catch-up of the feed and `subscribe` its live
tail, both through the reader: they show exactly the events readers of the journals return (a
refused append is in the log but never in the feed), and a notification id never changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import closing
from typing import Any

from eventsourcing.persistence import ApplicationRecorder
from eventsourcing.persistence import InfrastructureFactoryError
from eventsourcing.persistence import Notification
from eventsourcing.persistence import OperationalError
from eventsourcing.persistence import StoredEvent
from eventsourcing.persistence import Subscription
from kjournal.api.feed_items import FeedItem
from kjournal.errors import InvalidCursor
from kjournal.errors import KJournalError
from kjournal.errors import PositionGone
from kjournal.errors import UnknownTopic
from kjournal.feed.cursor import Cursor
from kjournal.feed.cursor import Position

from kjournal_eventsourcing.codec import to_notification
from kjournal_eventsourcing.notification_ids import APPLICATION_PARTITION
from kjournal_eventsourcing.notification_ids import cursor_from
from kjournal_eventsourcing.notification_ids import notification_id
from kjournal_eventsourcing.notification_ids import position_of
from kjournal_eventsourcing.recorders import KJournalAggregateRecorder

__all__ = ["KJournalApplicationRecorder", "KJournalSubscription"]

_LAST_WINDOW = 64  # records of max_notification_id's first look back from the end
SUBSCRIPTION_HEARTBEAT_S = 1.0


class KJournalApplicationRecorder(KJournalAggregateRecorder, ApplicationRecorder):
    """Refuses (InfrastructureFactoryError) a topic that does not exist or has more than one
    partition: notification ids must increase with one log's order."""

    def __init__(self, topic: str, writer_url: str, reader_url: str, **kwargs: Any) -> None:
        super().__init__(topic, writer_url, reader_url, **kwargs)
        try:
            partitions = self._end().positions
        except UnknownTopic as exc:
            self.close()
            raise InfrastructureFactoryError(
                f"topic {topic} does not exist: an application recorder needs a topic with one "
                "partition (docs/eventsourcing.md)"
            ) from exc
        except KJournalError as exc:
            self.close()
            raise OperationalError(f"topic {topic}: {exc}") from exc
        if len(partitions) != 1:
            self.close()
            raise InfrastructureFactoryError(
                f"topic {topic} has {len(partitions)} partitions: an application recorder needs "
                "a topic with one partition, because its notification ids follow the order of "
                "one log and Kafka orders records only within a partition (docs/eventsourcing.md)"
            )

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int]:
        ids: list[int] = []
        for result, count in self._insert(stored_events):
            offset = result.partition_offset.offset
            ids.extend(notification_id(offset, index) for index in range(count))
        return ids

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        first = None if start is None else start if inclusive_of_start else start + 1
        if limit <= 0 or (stop is not None and first is not None and stop < first):
            return []
        try:
            items = self._reader.feed(self.topic, cursor_from(first), tags=topics)
            with closing(items):
                return self._notifications(items, limit, stop, topics)
        except InvalidCursor:
            if first is not None and position_of(first) >= self._end_position():
                return []  # past the last record: nothing yet
            raise
        except PositionGone as exc:
            raise OperationalError(
                f"notifications from {first} on are gone from topic {self.topic} (retention): "
                "an application topic must keep its log (docs/eventsourcing.md)"
            ) from exc
        except KJournalError as exc:
            raise OperationalError(f"topic {self.topic}: {exc}") from exc

    def max_notification_id(self) -> int | None:
        try:
            end = self._end_position().offset
            window = _LAST_WINDOW
            while end > 0:
                start = max(0, end - window)
                last = self._last_id(start)
                if last is not None or start == 0:
                    return last
                window *= 8
            return None
        except KJournalError as exc:
            raise OperationalError(f"topic {self.topic}: {exc}") from exc

    def subscribe(
        self, gt: int | None = None, topics: Sequence[str] = ()
    ) -> Subscription[ApplicationRecorder]:
        return KJournalSubscription(self, gt, topics)

    def follow(
        self, gt: int | None, topics: Sequence[str]
    ) -> Generator[Notification | None, None, None]:
        """The live tail from after notification `gt`, without end; a heartbeat, when nothing
        comes for SUBSCRIPTION_HEARTBEAT_S, is None."""
        after = cursor_from(None if gt is None else gt + 1)
        items = self._reader.follow(
            self.topic, after, tags=topics, heartbeat_s=SUBSCRIPTION_HEARTBEAT_S
        )
        with closing(items):
            for item in items:
                yield self._notification(item, topics)

    def _notifications(
        self, items: Iterator[FeedItem], limit: int, stop: int | None, topics: Sequence[str]
    ) -> list[Notification]:
        notifications: list[Notification] = []
        for item in items:
            notification = self._notification(item, topics)
            if notification is None:
                continue
            if stop is not None and notification.id > stop:
                break
            notifications.append(notification)
            if len(notifications) >= limit:
                break
        return notifications

    @staticmethod
    def _notification(item: FeedItem, topics: Sequence[str]) -> Notification | None:
        """The event item's notification (None for other items, and events of other topics)."""
        if item.type != "event" or item.record is None or item.id is None:
            return None
        offset = item.record.partition_offset.offset
        notification = to_notification(
            item.id, item.record, notification_id(offset, item.index or 0)
        )
        return notification if not topics or notification.topic in topics else None

    def _last_id(self, start: int) -> int | None:
        after = None if start == 0 else Cursor({APPLICATION_PARTITION: Position(start)}).encode()
        try:
            return self._last_in(self._reader.feed(self.topic, after))
        except PositionGone:  # raised as the feed is read: retention passed `start`
            return self._last_in(self._reader.feed(self.topic))

    def _last_in(self, items: Generator[FeedItem, None, None]) -> int | None:
        last: int | None = None
        with closing(items):
            for item in items:
                notification = self._notification(item, ())
                if notification is not None:
                    last = notification.id
        return last

    def _end(self) -> Cursor:
        """The end offsets of the topic's partitions as of now (a catch-up from its end)."""
        items = self._reader.feed(self.topic, from_end=True)
        with closing(items):
            for item in items:
                if item.type == "end":
                    return Cursor.decode(item.cursor)
        raise OperationalError(f"topic {self.topic}: the feed ended without its end line")

    def _end_position(self) -> Position:
        return self._end().positions[APPLICATION_PARTITION]


class KJournalSubscription(Subscription[ApplicationRecorder]):
    """The live tail of the application sequence after `gt`. `stop()` from the iterating thread
    ends it at once; from another thread, at the next notification or heartbeat (within
    SUBSCRIPTION_HEARTBEAT_S)."""

    def __init__(
        self, recorder: KJournalApplicationRecorder, gt: int | None, topics: Sequence[str]
    ) -> None:
        super().__init__(recorder, gt, topics)
        self._tail = recorder.follow(gt, topics)

    def __next__(self) -> Notification:
        while not self._has_been_stopped:
            try:
                notification = next(self._tail)
            except KJournalError as exc:
                raise OperationalError(f"subscription: {exc}") from exc
            if notification is not None:
                self._last_notification_id = notification.id
                return notification
        raise StopIteration

    def __exit__(self, *args: object, **kwargs: Any) -> None:
        try:
            super().__exit__(*args, **kwargs)
        finally:
            self._close()

    def _close(self) -> None:
        # From another thread while the iterating one is inside the tail, close() refuses: that
        # one then ends at the next heartbeat.
        with contextlib.suppress(ValueError):
            self._tail.close()
