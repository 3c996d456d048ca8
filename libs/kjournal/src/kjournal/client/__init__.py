"""HTTP clients of the writer and reader services, sync (`Client`) and asyncio (`AsyncClient`).

    from kjournal.client import Client
    from kjournal.model import Event, JsonPayload, Key, SeqNr

    with Client(writer_url="http://127.0.0.1:8081", reader_url="http://127.0.0.1:8082") as client:
        key = Key("journal", "order-1")
        client.append(key, [Event(SeqNr(1), payload=JsonPayload({"amount": 5}))])
        for record in client.read(key):
            print(record.seq_nr, record.event.payload)

Results are the library's own types; errors are kjournal errors rebuilt from problem bodies.
Reads and other GETs are retried on transport errors and 502/503/504 (a read resumes after the
last event it received); writes are retried only when no connection could be opened.
"""

from kjournal.client._async import AsyncClient
from kjournal.client._base import MarkResult
from kjournal.client._base import RetryPolicy
from kjournal.client._sync import Client

__all__ = ["AsyncClient", "Client", "MarkResult", "RetryPolicy"]
