"""The least an HTTP append can cost in Python, for bench/http_floor.py: a bare ASGI app on uvicorn
(uvloop, httptools, no access log, as the writer runs) that answers bench/http_append.lua's
POSTs `201 {"from": <the first seqNr>}`, reading the body with orjson and nothing else. With
BARE_APPEND_TOPIC set it also hands each body to one AIOKafkaProducer with the writer's producer
settings (kjournal.kafka.producer.producer_options: acks=all, lz4, linger 0) and answers once the
broker acked it: no validation, no kafka-journal record, no outcome.

    KJOURNAL_HTTP__PORT=8123 [BARE_APPEND_TOPIC=t KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=h:p] \\
        python -m bench._bare_append
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import orjson
import uvicorn
from aiokafka import AIOKafkaProducer
from kjournal.kafka.producer import producer_options
from kjournal.kafka.settings import KafkaSettings

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_HEADERS = [(b"content-type", b"application/json")]


class BareAppend:
    def __init__(self, topic: str | None, bootstrap: str) -> None:
        self._topic = topic
        self._bootstrap = bootstrap
        self._producer: AIOKafkaProducer | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["method"] != "POST":  # /readyz
            await _answer(send, 200, b"{}")
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        first = orjson.loads(body)["events"][0]["seqNr"]
        if self._producer is not None and self._topic is not None:
            journal = scope["path"].split("/")[4].encode()
            await self._producer.send_and_wait(self._topic, value=body, key=journal)
        await _answer(send, 201, b'{"from":%d}' % first)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self._topic is not None:
                    settings = KafkaSettings(bootstrap_servers=self._bootstrap)
                    self._producer = AIOKafkaProducer(**producer_options(settings))
                    await self._producer.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._producer is not None:
                    await self._producer.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    app = BareAppend(
        os.environ.get("BARE_APPEND_TOPIC"),
        os.environ.get("KJOURNAL_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
    )
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(os.environ["KJOURNAL_HTTP__PORT"]),
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        lifespan="on",
    )
