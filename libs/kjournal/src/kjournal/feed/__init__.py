"""The topic feed: every journal's events of a topic in partition order, resumable by cursor,
agreeing with journal reads (docs/feed.md)."""

from kjournal.feed.cursor import Cursor, Position
from kjournal.feed.entries import (
    Control,
    FeedControl,
    FeedEnd,
    FeedEntry,
    FeedEvent,
    FeedHeartbeat,
    entry_to_json,
    shared_event_lines,
)
from kjournal.feed.reading import FeedPlan, FeedRequest, TopicFeed
from kjournal.feed.source import TopicSource

__all__ = [
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
    "TopicFeed",
    "TopicSource",
    "entry_to_json",
    "shared_event_lines",
]
