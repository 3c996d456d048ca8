"""Creating and deleting Kafka topics: `up`, the tests and the benchmarks (one place for the
admin calls)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from kjournal_dev.errors import DevError


async def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    """Create the topic and wait until every partition has a leader."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
        await _until_led(admin, [name])
    finally:
        await admin.close()


async def ensure_topics(
    bootstrap: str,
    names: Iterable[str],
    partitions: int,
    timeout_s: float = 30.0,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Create the topics that are missing (existing ones are left as they are), and wait until
    every partition of each has a leader: a client started next finds them whole. `options`:
    aiokafka's (a secured broker's admin credentials)."""
    names = list(names)
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=15000, **(options or {})
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [NewTopic(name, partitions, 1) for name in names if name not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(missing)
        await _until_led(admin, names, timeout_s)
    finally:
        await admin.close()


async def _until_led(admin: AIOKafkaAdminClient, names: list[str], timeout_s: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not _all_led(await admin.describe_topics(names)):
        if asyncio.get_running_loop().time() > deadline:
            raise DevError(f"topics {', '.join(names)} have no leaders after {timeout_s:g} s")
        await asyncio.sleep(0.1)


def _all_led(described: list[dict[str, Any]]) -> bool:
    return all(
        entry.get("error_code", 0) == 0
        and entry.get("partitions")
        and all(p.get("leader", -1) >= 0 for p in entry["partitions"])
        for entry in described
    )


async def delete_topics(bootstrap: str, names: Sequence[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics(list(names))
    finally:
        await admin.close()
