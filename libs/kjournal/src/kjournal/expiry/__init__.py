"""Expiry: purging, through the log, the journals whose `expire_on` date has come (docs/operations.md).

`decide.py` holds the rule (pure): a journal is purged only when its head still says it expired
and nothing of it waits in Kafka's unreplicated tail (an append: it is in use again; a purge: one
is already on its way). `run.py` applies it to a topic over two ports, the eventual store's
expired heads and the journal log, and produces one Purge action per journal, as a writer's
purge would be: readers, the replicator, the topic feed and Scala services all see it.
"""

from kjournal.expiry.decide import Skip
from kjournal.expiry.decide import verdict
from kjournal.expiry.run import ExpiryLog
from kjournal.expiry.run import ExpiryReport
from kjournal.expiry.run import ExpiryStore
from kjournal.expiry.run import expire_topic

__all__ = ["ExpiryLog", "ExpiryReport", "ExpiryStore", "Skip", "expire_topic", "verdict"]
