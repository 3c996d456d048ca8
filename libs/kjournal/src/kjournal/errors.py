"""Every error kjournal raises on purpose.

KJournalError
├── InvalidInput                 the caller asked for something malformed; nothing was changed
│   ├── InvalidKey               bad topic or id
│   ├── UnknownTopic             a topic the cluster does not have
│   ├── InvalidSeqNr             seqNr outside 1..2^63-1, or a bad range
│   ├── EmptyAppend              an append without events
│   ├── SeqNrOrderError          seqNrs of an append not strictly increasing
│   ├── InvalidPayload           payload not of its declared type
│   ├── InvalidDuration          an expireAfter that is not a duration
│   ├── TooManyEvents            an append of more events than the writer accepts at once
│   ├── NestedTooDeeply          a request body nested deeper than the writer accepts
│   ├── InvalidCursor            a topic feed's cursor that is not one, or not for this topic
│   └── RecordTooLarge           the encoded record exceeds the configured maximum
├── FormatError                  bytes from Kafka or Cassandra that cannot be decoded
│   ├── HeaderFormatError        a present `journal.action` header that is not valid
│   ├── PayloadFormatError       an Append record value that is not a valid container
│   └── DataIntegrityError       a stored row that contradicts itself or its journal
├── JournalNotFound              no such journal
├── PositionGone                 a feed position before the oldest offset Kafka still holds (410)
├── AppendRefused                the journal's rules drop this append: nothing of it is ever read
│   ├── AppendConflict           seqNrs the journal holds, with other content (HTTP 409)
│   ├── ConditionFailed          its If-Match / If-None-Match did not hold (HTTP 412)
│   └── SeqNrGap                 it skips too many seqNrs above the journal's (HTTP 409)
├── JournalQuarantined           a record of this journal was quarantined (topic, partition, offset)
├── TopicRepartitioned           the journal's key maps to another partition than its head's
├── PartitionCountChanged        a topic's partition count changed while it was being tailed
├── SchemaError                  the Cassandra schema is missing, newer than known, or a migration failed
├── CredentialsRefused           Kafka or Cassandra refused the service's credentials (start-up)
├── NotConfigured                an operation this object was not set up for
│   ├── ReadsNotConfigured       reads on a Journals opened without an eventual reader
│   ├── WritesNotConfigured      writes on a Journals opened with writes=False
│   └── SparkJarsNotFound        the Spark Kafka source jars are not where the settings say
├── MicroBatchError              a Spark micro-batch is not planned or applied the way replication needs
├── NotAuthenticated             no bearer token, or one that is not valid (HTTP 401)
│   └── InvalidToken             a token that is malformed, expired, wrongly signed or not for us
├── PermissionDenied             a valid token without the scope or topic an operation needs (403)
├── RequestRejected              a request over the server's limits on its head or timing
├── Unavailable                  a dependency did not answer
│   ├── KafkaUnavailable
│   ├── CassandraUnavailable
│   ├── KeysUnavailable          the token issuer's key set could not be read
│   ├── FoldUnavailable          a reader's fold cannot answer now (rebuilding, or far behind)
│   └── Busy                     the service is at its limit of concurrent work; retry later
└── DeadlineExceeded             an operation ran out of time
    ├── OutcomeUnknown           Kafka did not acknowledge an action in time; it may still land
    └── SliceTimeout             applying a partition's slice of a micro-batch took too long
"""

from __future__ import annotations


class KJournalError(Exception):
    """Root of kjournal's errors."""


class InvalidInput(KJournalError):
    """The request is malformed; nothing was written."""


class InvalidKey(InvalidInput):
    pass


class UnknownTopic(InvalidInput):
    def __init__(self, topic: str) -> None:
        super().__init__(f"topic {topic!r} does not exist")
        self.topic = topic


class InvalidSeqNr(InvalidInput):
    pass


class EmptyAppend(InvalidInput):
    pass


class SeqNrOrderError(InvalidInput):
    pass


class InvalidPayload(InvalidInput):
    pass


class InvalidDuration(InvalidInput):
    pass


class TooManyEvents(InvalidInput):
    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"an append of {count} events exceeds the limit of {limit}")
        self.count = count
        self.limit = limit


class NestedTooDeeply(InvalidInput):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the JSON body is nested deeper than the limit of {limit} levels")
        self.limit = limit


class RecordTooLarge(InvalidInput):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"record of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


class FormatError(KJournalError):
    """Stored bytes that cannot be decoded."""


class HeaderFormatError(FormatError):
    pass


class PayloadFormatError(FormatError):
    pass


class DataIntegrityError(FormatError):
    pass


class JournalNotFound(KJournalError):
    pass


class InvalidCursor(InvalidInput):
    """A topic feed's cursor that does not parse, or names partitions or offsets the topic does
    not have (docs/feed.md)."""


class PositionGone(KJournalError):
    """A topic feed was asked to resume before the oldest offset Kafka still holds of a partition
    (retention removed what lies between): `earliest` is where that partition now begins."""

    def __init__(self, topic: str, partition: int, offset: int, earliest: int) -> None:
        super().__init__(
            f"partition {partition} of topic {topic} now begins at offset {earliest}: "
            f"offset {offset} is gone (retention). Rebuild from the journals (docs/feed.md), then "
            "follow the feed from a new position"
        )
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.earliest = earliest


class AppendRefused(KJournalError):
    """The append is in Kafka but the append rule drops it (docs/concurrency.md): no reader will
    ever return it. `seq_nr` is the journal's seqNr it met (0: the journal did not exist)."""

    def __init__(self, topic: str, id: str, seq_nr: int, detail: str) -> None:
        super().__init__(detail)
        self.topic = topic
        self.id = id
        self.seq_nr = seq_nr


class AppendConflict(AppendRefused):
    """An unconditional append of seqNrs the journal already holds, with other content."""

    def __init__(self, topic: str, id: str, seq_nr: int) -> None:
        super().__init__(
            topic,
            id,
            seq_nr,
            f"journal {topic}:{id} is at seqNr {seq_nr}: the append repeats seqNrs it holds "
            "with other content, and was dropped",
        )


class ConditionFailed(AppendRefused):
    """A conditional append whose condition did not hold when it reached the journal."""

    def __init__(self, topic: str, id: str, seq_nr: int, expected: int) -> None:
        wanted = "not to exist" if expected == 0 else f"to be at seqNr {expected}"
        found = "did not exist" if seq_nr == 0 else f"was at seqNr {seq_nr}"
        super().__init__(
            topic,
            id,
            seq_nr,
            f"journal {topic}:{id} {found}; the append expected it {wanted}, and was dropped",
        )
        self.expected = expected


class SeqNrGap(AppendRefused):
    """An unconditional append that skips more seqNrs than the append rule allows above the
    journal's seqNr (kjournal.fold.append_rule.MAX_GAP)."""

    def __init__(self, topic: str, id: str, seq_nr: int, first_seq_nr: int, max_gap: int) -> None:
        super().__init__(
            topic,
            id,
            seq_nr,
            f"journal {topic}:{id} is at seqNr {seq_nr}: an append may skip at most {max_gap} "
            f"seqNrs, this one starts at {first_seq_nr}, and was dropped",
        )
        self.first_seq_nr = first_seq_nr
        self.max_gap = max_gap


class JournalQuarantined(KJournalError):
    """A record of the journal could not be replicated; reads fail until an operator resolves it."""

    def __init__(self, topic: str, id: str, partition: int, offset: int, reason: str) -> None:
        super().__init__(
            f"journal {topic}:{id} has a quarantined record at partition {partition} "
            f"offset {offset}: {reason}"
        )
        self.topic = topic
        self.id = id
        self.partition = partition
        self.offset = offset
        self.reason = reason


class TopicRepartitioned(KJournalError):
    """The topic's partition count changed, so the journal's actions span two partitions."""

    def __init__(self, topic: str, id: str, stored: int, computed: int) -> None:
        super().__init__(
            f"journal {topic}:{id} was replicated from partition {stored} but its key now maps to "
            f"partition {computed}: the topic's partition count changed; refusing to misread it"
        )
        self.topic = topic
        self.id = id


class PartitionCountChanged(KJournalError):
    def __init__(self, topic: str, before: int, after: int) -> None:
        super().__init__(f"topic {topic} went from {before} to {after} partitions")
        self.topic = topic


class SchemaError(KJournalError):
    pass


class CredentialsRefused(KJournalError):
    """Kafka or Cassandra refused the credentials the service was given: retrying cannot help,
    so the service stops at start-up with one line naming the system and the principal."""


class NotConfigured(KJournalError):
    """The object was not set up for this operation."""


class ReadsNotConfigured(NotConfigured):
    """A Journals opened without an eventual reader can only write."""


class WritesNotConfigured(NotConfigured):
    """A Journals opened with writes=False (read-only Kafka rights) can only read."""


class SparkJarsNotFound(NotConfigured):
    """The Spark Kafka source jars are not where the settings say."""


class MicroBatchError(KJournalError):
    """A Spark micro-batch is not planned or applied the way replication needs: fail it."""


class NotAuthenticated(KJournalError):
    """The request carried no bearer token, or one that is not valid (expired, wrongly signed,
    for another issuer or audience)."""


class InvalidToken(NotAuthenticated):
    """The token is not one the service accepts; the message says why (safe to show)."""


class PermissionDenied(KJournalError):
    """The token is valid but lacks the scope, or the topic, that the operation needs."""


class RequestRejected(KJournalError):
    """The request's head was too large, or it arrived too slowly: the server closed it."""


class Unavailable(KJournalError):
    pass


class KafkaUnavailable(Unavailable):
    pass


class CassandraUnavailable(Unavailable):
    pass


class KeysUnavailable(Unavailable):
    """The token issuer's key set (JWKS) could not be read: no token can be verified."""


class FoldUnavailable(Unavailable):
    """The reader's fold of a topic cannot answer now: it is being rebuilt after a failure, or
    has not consumed what the question needs. The read side then reads Cassandra and Kafka
    itself (read/view.py, read/outcome.py)."""


class Busy(Unavailable):
    """The service is at its limit of concurrent work of this kind; retry later."""


class DeadlineExceeded(KJournalError):
    pass


class OutcomeUnknown(DeadlineExceeded):
    """The broker did not acknowledge an action in time (it may be written later, or never), or
    an append's outcome could not be learned. Resending the same append is safe: it is answered
    as a replay if the first copy was taken, as a conflict or refusal if it was not."""


class SliceTimeout(DeadlineExceeded):
    """A partition's slice did not finish within `ApplySettings.slice_timeout_s`."""
