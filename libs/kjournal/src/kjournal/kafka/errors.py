"""The one place aiokafka's errors become kjournal's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from aiokafka.errors import KafkaError
from aiokafka.errors import KafkaTimeoutError
from aiokafka.errors import MessageSizeTooLargeError
from aiokafka.errors import RecordTooLargeError
from aiokafka.errors import UnknownTopicOrPartitionError

from kjournal.errors import DeadlineExceeded
from kjournal.errors import KafkaUnavailable
from kjournal.errors import RecordTooLarge
from kjournal.errors import UnknownTopic


@contextmanager
def kafka_errors(topic: str | None = None, size: int = 0, limit: int = 0) -> Iterator[None]:
    """Translate aiokafka errors raised inside the block, chaining the original."""
    try:
        yield
    except (MessageSizeTooLargeError, RecordTooLargeError) as exc:
        raise RecordTooLarge(size, limit) from exc
    except UnknownTopicOrPartitionError as exc:
        if topic is None:
            raise KafkaUnavailable(str(exc)) from exc
        raise UnknownTopic(topic) from exc
    except KafkaTimeoutError as exc:
        raise DeadlineExceeded(f"Kafka did not answer in time: {exc}") from exc
    except KafkaError as exc:
        raise KafkaUnavailable(f"Kafka error: {exc}") from exc
    except OSError as exc:
        raise KafkaUnavailable(f"cannot reach Kafka: {exc}") from exc
