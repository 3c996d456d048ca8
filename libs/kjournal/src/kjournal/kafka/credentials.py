"""Whether the brokers accept the configured SASL credentials: a service checks it at start-up,
so a wrong password stops it with one line instead of endless reconnection attempts (aiokafka
logs a refused handshake and reports only that it could not bootstrap)."""

from __future__ import annotations

import asyncio

from aiokafka.conn import create_conn
from aiokafka.errors import IllegalSaslStateError
from aiokafka.errors import SaslAuthenticationFailed
from aiokafka.errors import UnsupportedSaslMechanismError

from kjournal.errors import CredentialsRefused
from kjournal.kafka.settings import KafkaSettings

__all__ = ["check_kafka_credentials"]

_REFUSALS = (SaslAuthenticationFailed, UnsupportedSaslMechanismError, IllegalSaslStateError)


async def check_kafka_credentials(settings: KafkaSettings, timeout_s: float = 10.0) -> None:
    """CredentialsRefused if a broker refuses the SASL handshake; nothing if it succeeds, if no
    SASL is configured, or if no broker answers in time (unreachable is not refused)."""
    if settings.sasl_mechanism is None:
        return
    options = settings.aiokafka_options()
    for server in settings.bootstrap_servers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            async with asyncio.timeout(timeout_s):
                connection = await create_conn(
                    host,
                    int(port),
                    client_id=options["client_id"],
                    request_timeout_ms=int(timeout_s * 1000),
                    ssl_context=options.get("ssl_context"),
                    security_protocol=settings.security_protocol,
                    sasl_mechanism=settings.sasl_mechanism,
                    sasl_plain_username=settings.sasl_username,
                    sasl_plain_password=options.get("sasl_plain_password"),
                )
        except _REFUSALS as exc:
            raise CredentialsRefused(
                f"Kafka at {server.strip()} refused the credentials of SASL user "
                f"{settings.sasl_username!r} ({settings.sasl_mechanism}): {_reason(exc)}"
            ) from None
        except (OSError, TimeoutError, ValueError, Exception):
            continue
        connection.close()
        return


def _reason(exc: Exception) -> str:
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text
