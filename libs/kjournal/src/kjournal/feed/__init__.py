"""The topic feed: every journal's events of a topic in partition order, resumable by cursor,
agreeing with journal reads (docs/feed.md)."""

from kjournal.feed.cursor import Cursor, Position
from kjournal.feed.entries import (
    AppendEvents,
    Control,
    FeedControl,
    FeedEnd,
    FeedEntry,
    FeedEvent,
    FeedHeartbeat,
    RecordEntries,
    entry_to_json,
)
from kjournal.feed.reading import FeedPlan, FeedRequest, TopicFeed
from kjournal.feed.source import TopicSource

__all__ = [
    "AppendEvents",
    "Control",
    "Cursor",
    "FeedControl",
    "FeedEnd",
    "FeedEntry",
    "FeedEvent",
    "FeedHeartbeat",
    "FeedPlan",
    "FeedRequest",
    "Position",
    "RecordEntries",
    "TopicFeed",
    "TopicSource",
    "entry_to_json",
]
