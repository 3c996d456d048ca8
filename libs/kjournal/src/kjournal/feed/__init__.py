"""The topic feed: every journal's events of a topic in partition order, resumable by cursor,
agreeing with journal reads (docs/feed.md)."""

from kjournal.feed.cursor import Cursor
from kjournal.feed.cursor import Position
from kjournal.feed.entries import AppendEvents
from kjournal.feed.entries import AppendLines
from kjournal.feed.entries import Control
from kjournal.feed.entries import FeedControl
from kjournal.feed.entries import FeedEnd
from kjournal.feed.entries import FeedEntry
from kjournal.feed.entries import FeedEvent
from kjournal.feed.entries import FeedHeartbeat
from kjournal.feed.entries import RecordEntries
from kjournal.feed.entries import entry_to_json
from kjournal.feed.reading import FeedPlan
from kjournal.feed.reading import FeedRequest
from kjournal.feed.reading import TopicFeed
from kjournal.feed.source import TopicSource

__all__ = [
    "AppendEvents",
    "AppendLines",
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
