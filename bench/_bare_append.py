"""The least an HTTP append can cost in Python, for bench/http_floor.py: a bare ASGI app on uvicorn
(uvloop, httptools, no access log, as the writer runs) that answers bench/http_append.lua's
POSTs, reading the body with orjson and nothing else. `BARE_APPEND_STEP` says how much of an
append it does before it answers, each step adding to the one before:

* `none` (the default): nothing; it answers `201 {"from": <the first seqNr>}`;
* `produce`: hands the body as it is to one AIOKafkaProducer with the writer's producer settings
  (kjournal.kafka.producer.producer_options: acks=all, lz4, linger 0) and answers once the broker
  acked it;
* `record`: builds the append's events from the body by hand (no validation) and produces its
  kafka-journal record through `kjournal.writes.WriteSide` (the record's encoding and kjournal's
  producer, as the writer does), answering with where it landed;
* `outcome`: `WritableJournal.append` with the writer's reader link (`ReaderOutcomes`, to the
  reader at KJOURNAL_READER__URL): the append rule's verdict before the answer, as the writer
  gives it, but none of the service around it (FastAPI and Starlette, pydantic validation, the
  metrics, the server span, the guard).

    KJOURNAL_HTTP__PORT=8123 [BARE_APPEND_STEP=outcome BARE_APPEND_TOPIC=t \\
        KJOURNAL_KAFKA__BOOTSTRAP_SERVERS=h:p KJOURNAL_READER__URL=http://...] \\
        python -m bench._bare_append
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import orjson
import uvicorn
from aiokafka import AIOKafkaProducer
from kjournal.api.convert import append_response_json
from kjournal.kafka.producer import producer_options
from kjournal.kafka.settings import KafkaSettings
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal.writes import WriteSide
from kjournal_writer.outcomes import ReaderOutcomes
from kjournal_writer.settings import ReaderLinkSettings

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

STEPS = ("none", "produce", "record", "outcome")
_HEADERS = [(b"content-type", b"application/json")]


class BareAppend:
    def __init__(self, step: str, topic: str | None, bootstrap: str, reader: str | None) -> None:
        if step not in STEPS:
            raise SystemExit(f"BARE_APPEND_STEP is one of {', '.join(STEPS)}, not {step!r}")
        if step != "none" and topic is None:
            raise SystemExit(f"BARE_APPEND_STEP={step} needs BARE_APPEND_TOPIC")
        if step == "outcome" and reader is None:
            raise SystemExit("BARE_APPEND_STEP=outcome needs KJOURNAL_READER__URL")
        self._step = step
        self._topic = topic or ""
        self._kafka = KafkaSettings(bootstrap_servers=bootstrap)
        self._reader = reader
        self._stack = AsyncExitStack()
        self._producer: AIOKafkaProducer | None = None
        self._writes: WriteSide | None = None

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
        journal_id = scope["path"].split("/")[4]
        if self._writes is not None:
            journal = self._writes.journal(Key(self._topic, journal_id))
            events = [
                Event(SeqNr(event["seqNr"]), payload=JsonPayload(event["payload"]))
                for event in orjson.loads(body)["events"]
            ]
            if self._step == "record":
                result = await journal.produce(events)
            else:
                result = await journal.append(events)
            await _answer(send, 200 if result.replay else 201, append_response_json(result))
            return
        first = orjson.loads(body)["events"][0]["seqNr"]
        if self._producer is not None:
            await self._producer.send_and_wait(self._topic, value=body, key=journal_id.encode())
        await _answer(send, 201, b'{"from":%d}' % first)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self._start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        stack = self._stack
        if self._step == "produce":
            self._producer = AIOKafkaProducer(**producer_options(self._kafka))
            await self._producer.start()
            stack.push_async_callback(self._producer.stop)
        elif self._step in ("record", "outcome"):
            outcomes = None
            if self._step == "outcome":
                link = ReaderLinkSettings(url=self._reader)
                outcomes = await stack.enter_async_context(ReaderOutcomes(link))
            self._writes = await stack.enter_async_context(
                WriteSide(self._kafka, outcomes=outcomes)
            )


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    app = BareAppend(
        os.environ.get("BARE_APPEND_STEP", "none"),
        os.environ.get("BARE_APPEND_TOPIC"),
        os.environ.get("KJOURNAL_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
        os.environ.get("KJOURNAL_READER__URL"),
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
