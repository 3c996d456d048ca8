"""The access split on the real secured broker: each principal may do what its service needs and
is refused the rest, with the exact error its client sees; a wrong password is refused."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic
from aiokafka.errors import GroupAuthorizationFailedError
from aiokafka.errors import TopicAuthorizationFailedError
from kjournal.errors import CredentialsRefused
from kjournal.kafka.credentials import check_kafka_credentials
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.security.credentials import KAFKA_EXPIRY
from kjournal_dev.security.credentials import KAFKA_READER
from kjournal_dev.security.credentials import KAFKA_REPLICATOR
from kjournal_dev.security.credentials import KAFKA_WRITER
from pydantic import SecretStr

from tests.security.conftest import TOPIC
from tests.security.conftest import SecuredPlatform
from tests.security.conftest import topic_from_the_start
from tests.support.reports import reported_table

pytestmark = [pytest.mark.security]

PROBE_KEY = b"acl-probe"


@pytest.fixture(scope="module")
def observed(pytestconfig: pytest.Config) -> Iterator[dict[str, str]]:
    """What each refused call raised, reported at the end of the session."""
    yield from reported_table(pytestconfig, "Kafka ACL denials (real broker)", 58)


def _options(secured: SecuredPlatform, principal: str, password: str | None = None) -> Any:
    return {
        "bootstrap_servers": secured.endpoints.kafka_bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": principal,
        "sasl_plain_password": password or secured.credentials.kafka[principal],
    }


async def _produce(options: Any) -> None:
    producer = AIOKafkaProducer(**options)
    await producer.start()
    try:
        await producer.send_and_wait(TOPIC, b"probe", key=PROBE_KEY)
    finally:
        await producer.stop()


async def _consume(options: Any) -> int:
    async with topic_from_the_start(options) as consumer:
        batches = await consumer.getmany(timeout_ms=5000)
    return sum(len(records) for records in batches.values())


async def _admin(options: Any, call: Callable[[AIOKafkaAdminClient], Awaitable[Any]]) -> Any:
    admin = AIOKafkaAdminClient(**options)
    await admin.start()
    try:
        return await call(admin)
    finally:
        await admin.close()


def _refused(
    observed: dict[str, str],
    what: str,
    call: Coroutine[Any, Any, Any],
    error: type[Exception],
    message: str,
) -> None:
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    with pytest.raises(error, match=message) as raised:
        asyncio.run(call)
    observed[what] = f"{error.__name__}: {raised.value}"


def _create_topic(admin: AIOKafkaAdminClient) -> Any:
    return admin.create_topics([NewTopic(f"{TOPIC}_made_by_a_service", 1, 1)])


def test_the_writer_may_produce_but_not_consume_nor_look_at_groups(
    secured: SecuredPlatform, observed: dict[str, str]
):
    writer = _options(secured, KAFKA_WRITER)
    asyncio.run(_produce(writer))
    _refused(
        observed,
        "writer consumes a journal topic",
        _consume(writer),
        TopicAuthorizationFailedError,
        TOPIC,
    )
    _refused(
        observed,
        "writer describes a consumer group",
        _admin(writer, lambda admin: admin.describe_consumer_groups(["spark-kafka-source-x"])),
        GroupAuthorizationFailedError,
        "spark-kafka-source-x",
    )
    assert asyncio.run(_admin(writer, lambda admin: admin.list_consumer_groups())) == []


@pytest.mark.parametrize("principal", [KAFKA_READER, KAFKA_REPLICATOR])
def test_the_reader_and_the_replicator_may_consume_but_not_produce(
    secured: SecuredPlatform, observed: dict[str, str], principal: str
):
    options = _options(secured, principal)
    asyncio.run(_produce(_options(secured, KAFKA_WRITER)))
    assert asyncio.run(_consume(options)) >= 1
    _refused(
        observed,
        f"{principal} produces to a journal topic",
        _produce(options),
        TopicAuthorizationFailedError,
        TOPIC,
    )


def test_the_expiry_job_may_read_and_produce_but_not_look_at_groups(
    secured: SecuredPlatform, observed: dict[str, str]
):
    """It reads journals' tails and produces their purges; nothing more."""
    expiry = _options(secured, KAFKA_EXPIRY)
    asyncio.run(_produce(expiry))
    assert asyncio.run(_consume(expiry)) >= 1
    _refused(
        observed,
        f"{KAFKA_EXPIRY} describes a consumer group",
        _admin(expiry, lambda admin: admin.describe_consumer_groups(["spark-kafka-source-x"])),
        GroupAuthorizationFailedError,
        "spark-kafka-source-x",
    )


@pytest.mark.parametrize("principal", [KAFKA_WRITER, KAFKA_READER, KAFKA_REPLICATOR, KAFKA_EXPIRY])
def test_no_service_may_create_or_delete_topics(
    secured: SecuredPlatform, observed: dict[str, str], principal: str
):
    options = _options(secured, principal)
    created = asyncio.run(_admin(options, _create_topic))
    ((_, code, message),) = created.topic_errors
    assert (code, message) == (29, "Authorization failed.")
    observed[f"{principal} creates a topic"] = f"CreateTopics error_code={code} ({message})"
    deleted = asyncio.run(_admin(options, lambda admin: admin.delete_topics([TOPIC])))
    ((_, code),) = deleted.topic_error_codes
    assert code == 29  # TOPIC_AUTHORIZATION_FAILED
    observed[f"{principal} deletes a topic"] = f"DeleteTopics error_code={code}"


def test_a_wrong_password_is_refused(secured: SecuredPlatform, observed: dict[str, str]):
    settings = KafkaSettings(
        bootstrap_servers=secured.endpoints.kafka_bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username=KAFKA_WRITER,
        sasl_password=SecretStr("not-the-password"),
    )
    with pytest.raises(CredentialsRefused) as raised:
        asyncio.run(check_kafka_credentials(settings))
    assert str(raised.value).startswith(
        f"Kafka at {secured.endpoints.kafka_bootstrap} refused the credentials of SASL user "
        f"'{KAFKA_WRITER}' (SCRAM-SHA-512): Authentication failed"
    )
    observed["wrong password (SASL handshake)"] = str(raised.value)
