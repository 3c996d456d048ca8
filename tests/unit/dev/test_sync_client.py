"""The blocking HTTP client is generated from the asyncio one and cannot drift from it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from kjournal_dev.generate import sync_client


def test_the_blocking_client_is_what_its_asyncio_source_generates():
    assert sync_client.check() is None


def test_a_change_to_the_source_alone_is_drift(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    source = sync_client.source_path().read_text()
    changed = tmp_path / "_async.py"
    changed.write_text(source.replace("attempt += 1", "attempt += 2", 1))
    (tmp_path / "_sync.py").write_text(sync_client.sync_path().read_text())
    monkeypatch.setattr(sync_client, "source_path", lambda: changed)
    problem = sync_client.check()
    assert problem is not None
    assert "sync-client --write" in problem


def test_each_asynchronous_word_becomes_its_blocking_twin():
    source = textwrap.dedent(
        '''\
        """AsyncClient: the asyncio HTTP client; close it (contextlib.aclosing) if you stop."""

        import asyncio
        import time
        from collections.abc import AsyncGenerator

        import httpx


        class AsyncClient:
            """Asyncio client: `async with AsyncClient() as client`."""

            def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
                self._http = httpx.AsyncClient(transport=transport)

            async def __aenter__(self) -> AsyncClient:
                return self

            async def aclose(self) -> None:
                await self._http.aclose()

            async def lines(self) -> AsyncGenerator[str, None]:
                async with self._http.stream("GET", "/") as response:
                    await response.aread()
                    async for line in response.aiter_lines():
                        yield line
                await asyncio.sleep(time.monotonic())
        '''
    )
    expected = textwrap.dedent(
        '''\
        """Client: the blocking HTTP client; close the iterator if you stop."""

        import time
        from collections.abc import Generator

        import httpx


        class Client:
            """Blocking client: `with Client() as client`."""

            def __init__(self, transport: httpx.BaseTransport) -> None:
                self._http = httpx.Client(transport=transport)

            def __enter__(self) -> Client:
                return self

            def close(self) -> None:
                self._http.close()

            def lines(self) -> Generator[str, None, None]:
                with self._http.stream("GET", "/") as response:
                    response.read()
                    for line in response.iter_lines():
                        yield line
                time.sleep(time.monotonic())
        '''
    )
    assert sync_client.render(source) == f"{sync_client.HEADER}\n{expected}"
