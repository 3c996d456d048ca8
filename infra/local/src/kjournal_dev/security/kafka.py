"""The secured broker: a SASL_PLAINTEXT client listener (SCRAM-SHA-512) with StandardAuthorizer
ACLs, SCRAM users created when the storage is formatted, and the least privileges of each
principal granted with Kafka's own `kafka-acls` tool (`org.apache.kafka.tools.AclCommand`).

The controller listener stays PLAINTEXT on loopback: the broker half of this combined node
reaches its controller half through it as `User:ANONYMOUS`, which is therefore a super user.
Nothing else can connect as ANONYMOUS: the only listener clients are told about asks every
connection for a password. On a real cluster the controller listener is SASL too (docs).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.java import Java
from kjournal_dev.security.credentials import KAFKA_ADMIN
from kjournal_dev.security.credentials import KAFKA_EXPIRY
from kjournal_dev.security.credentials import KAFKA_READER
from kjournal_dev.security.credentials import KAFKA_REPLICATOR
from kjournal_dev.security.credentials import KAFKA_WRITER
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.tls import LoopbackTls

__all__ = [
    "MECHANISM",
    "admin_options",
    "client_env",
    "grant_acls",
    "scram_arguments",
    "secure_properties",
]

MECHANISM = "SCRAM-SHA-512"
_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule"
_ACLS_DONE = "acls.granted"


def _jaas(user: str, password: str) -> str:
    return f'{_LOGIN} required username="{user}" password="{password}";'


def secure_properties(
    config: DevConfig, credentials: Credentials, tls: LoopbackTls
) -> dict[str, str]:
    """What differs from the plain broker's server.properties: SASL_PLAINTEXT on the Kafka port,
    SASL_SSL on the TLS port (the same users), ACLs."""
    host, port, cport = config.host, config.kafka_port, config.kafka_controller_port
    tls_port = config.kafka_tls_port
    admin = _jaas(KAFKA_ADMIN, credentials.kafka[KAFKA_ADMIN])
    return {
        "listeners": (
            f"SASL_PLAINTEXT://{host}:{port},SASL_SSL://{host}:{tls_port},"
            f"CONTROLLER://{host}:{cport}"
        ),
        "advertised.listeners": f"SASL_PLAINTEXT://{host}:{port},SASL_SSL://{host}:{tls_port}",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "listener.security.protocol.map": (
            "CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"
        ),
        "sasl.enabled.mechanisms": MECHANISM,
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": admin,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": admin,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(tls.broker_key_store),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:{KAFKA_ADMIN};User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }


def scram_arguments(credentials: Credentials) -> list[str]:
    """`kafka-storage format` arguments creating every principal's SCRAM credential."""
    arguments = []
    for name, password in credentials.kafka.items():
        arguments += ["--add-scram", f"{MECHANISM}=[name={name},password={password}]"]
    return arguments


def admin_options(credentials: Credentials) -> dict[str, Any]:
    """aiokafka client options of the admin principal."""
    return principal_options(KAFKA_ADMIN, credentials)


def principal_options(principal: str, credentials: Credentials) -> dict[str, Any]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": MECHANISM,
        "sasl_plain_username": principal,
        "sasl_plain_password": credentials.kafka[principal],
    }


def client_env(principal: str, credentials: Credentials) -> dict[str, str]:
    """A service's `KJOURNAL_KAFKA__*` settings for `principal`."""
    return {
        "KJOURNAL_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "KJOURNAL_KAFKA__SASL_MECHANISM": MECHANISM,
        "KJOURNAL_KAFKA__SASL_USERNAME": principal,
        "KJOURNAL_KAFKA__SASL_PASSWORD": credentials.kafka[principal],
    }


def acl_grants(topic_prefix: str) -> list[list[str]]:
    """The AclCommand arguments of each grant: least privilege per principal, on every topic
    starting with the prefix (PREFIXED patterns). No principal needs a consumer group: all assign
    partitions and commit nothing. The expiry job reads journals' tails and produces purges."""
    topics = ["--topic", topic_prefix, "--resource-pattern-type", "prefixed"]
    return [
        [
            "--allow-principal",
            f"User:{KAFKA_WRITER}",
            "--operation",
            "Write",
            "--operation",
            "Describe",
            *topics,
        ],
        [
            "--allow-principal",
            f"User:{KAFKA_READER}",
            "--allow-principal",
            f"User:{KAFKA_REPLICATOR}",
            "--operation",
            "Read",
            "--operation",
            "Describe",
            *topics,
        ],
        [
            "--allow-principal",
            f"User:{KAFKA_EXPIRY}",
            "--operation",
            "Read",
            "--operation",
            "Write",
            "--operation",
            "Describe",
            *topics,
        ],
    ]


def grant_acls(
    config: DevConfig, java: Java, tools: Path, home: Path, credentials: Credentials, prefix: str
) -> bool:
    """Grant every principal's ACLs once per broker storage (a marker in `home` remembers it);
    True if they were granted now."""
    if (home / _ACLS_DONE).exists():
        return False
    properties = home / "admin.properties"
    descriptor = os.open(properties, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(
            "security.protocol=SASL_PLAINTEXT\n"
            f"sasl.mechanism={MECHANISM}\n"
            f"sasl.jaas.config={_jaas(KAFKA_ADMIN, credentials.kafka[KAFKA_ADMIN])}\n"
        )
    log = home / "acls.log"
    try:
        _run_grants(config, java, tools, properties, prefix, log)
    finally:
        properties.unlink(missing_ok=True)  # the admin's password: only needed for the grants
    (home / _ACLS_DONE).write_text(prefix + "\n")
    return True


def _run_grants(
    config: DevConfig, java: Java, tools: Path, properties: Path, prefix: str, log: Path
) -> None:
    with log.open("w") as out:
        for grant in acl_grants(prefix):
            result = subprocess.run(
                [
                    java.executable,
                    "-cp",
                    f"{tools}/*",
                    "org.apache.kafka.tools.AclCommand",
                    "--bootstrap-server",
                    config.kafka_bootstrap,
                    "--command-config",
                    str(properties),
                    "--add",
                    *grant,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
            if result.returncode != 0:
                raise DevError(f"granting Kafka ACLs failed; see {log}")
