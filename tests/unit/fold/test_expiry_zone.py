"""expire_on in a time zone other than UTC: kafka-journal's ExpiryService takes the date of
`timestamp + expireAfter` in its JVM's default zone, which the replicator is told with
`CassandraSettings.expiry_time_zone` (tests/unit/replicator/test_expiry_time_zone.py)."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from kjournal.fold import expire_on
from kjournal.memory import InMemoryReplicatedStore
from kjournal.model import ExpireAfter
from kjournal.model.head import Expiry
from kjournal.replicate import replicate_partition
from kjournal.testing.records import KEY
from kjournal.testing.records import TOPIC
from kjournal.testing.records import append_record

HOUR = ExpireAfter.of(1, "hour")
DAY = ExpireAfter.of(1, "day")
NEW_YORK = ZoneInfo("America/New_York")
TOKYO = ZoneInfo("Asia/Tokyo")
# 20:30 on 1 March in UTC: an hour later it is still 1 March in UTC and New York, 2 March in Tokyo.
EVENING_UTC = datetime(2024, 3, 1, 20, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        (UTC, date(2024, 3, 1)),
        (NEW_YORK, date(2024, 3, 1)),
        (TOKYO, date(2024, 3, 2)),
        (timezone(timedelta(hours=3, minutes=30)), date(2024, 3, 2)),
    ],
)
def test_the_date_is_taken_in_the_zone(zone, expected: date):
    assert expire_on(HOUR, EVENING_UTC, zone) == expected


def test_utc_is_the_default():
    late = datetime(2024, 3, 1, 23, 30, tzinfo=UTC)
    assert expire_on(HOUR, late) == date(2024, 3, 2)
    assert expire_on(HOUR, late, NEW_YORK) == date(2024, 3, 1)


def test_the_duration_is_added_to_the_instant_not_to_the_wall_clock():
    # 23:30 on 9 March in New York; clocks move forward an hour that night. A day later is
    # 00:30 on 11 March there (Java: LocalDate.ofInstant(instant + 1 day)); adding a day to
    # the wall clock would give 23:30 on 10 March.
    before_the_change = datetime(2024, 3, 9, 23, 30, tzinfo=NEW_YORK)
    assert expire_on(DAY, before_the_change, NEW_YORK) == date(2024, 3, 11)


def test_the_replicator_writes_dates_in_the_zone_it_is_given():
    def replicate(zone: Any) -> Expiry | None:
        store = InMemoryReplicatedStore()
        record = append_record(0, [1], expire_after=HOUR)
        replicate_partition(TOPIC, 0, [record], store, EVENING_UTC, expiry_zone=zone)
        head = store.head(KEY)
        assert head is not None
        return head.expiry

    assert replicate(UTC) == Expiry(HOUR, date(2024, 3, 1))
    assert replicate(TOKYO) == Expiry(HOUR, date(2024, 3, 2))


def test_a_later_append_moves_the_date_in_the_zone():
    store = InMemoryReplicatedStore()
    replicate_partition(
        TOPIC,
        0,
        [append_record(0, [1], expire_after=HOUR)],
        store,
        EVENING_UTC - timedelta(hours=6),
    )
    replicate_partition(
        TOPIC, 0, [append_record(1, [2], expire_after=HOUR)], store, EVENING_UTC, expiry_zone=TOKYO
    )
    head = store.head(KEY)
    assert head is not None
    assert head.expiry == Expiry(HOUR, date(2024, 3, 2))
