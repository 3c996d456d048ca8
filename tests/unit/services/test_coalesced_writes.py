"""`CoalescedWrites` (kjournal_service/http_protocol.py): what one turn of the event loop writes to a
connection goes out as one write, in order, and nothing held is lost or reordered by a close."""

from __future__ import annotations

import asyncio

from kjournal_service.http_protocol import CoalescedWrites


class _Transport(asyncio.Transport):
    """Records what reaches the socket's transport, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, bytes]] = []
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.calls.append(("close", b""))
        self.closing = True

    def write_eof(self) -> None:
        self.calls.append(("eof", b""))

    def abort(self) -> None:
        self.calls.append(("abort", b""))
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 10


async def _turn() -> None:
    """Let the callbacks the current turn scheduled run."""
    await asyncio.sleep(0)


def test_the_writes_of_one_turn_leave_as_one_write_once_it_ends() -> None:
    async def run() -> list[tuple[str, bytes]]:
        under = _Transport()
        coalesced = CoalescedWrites(under, asyncio.get_running_loop())
        coalesced.write(b"HTTP/1.1 201 Created\r\n\r\n")
        coalesced.writelines([b"{", bytearray(b'"a"'), memoryview(b":1}")])
        coalesced.write(b"")
        assert under.calls == []
        assert coalesced.get_write_buffer_size() == 10 + len(b"HTTP/1.1 201 Created\r\n\r\n") + 7
        await _turn()
        coalesced.write(b"next")
        await _turn()
        return under.calls

    assert asyncio.run(run()) == [
        ("write", b'HTTP/1.1 201 Created\r\n\r\n{"a":1}'),
        ("write", b"next"),
    ]


def test_a_close_or_a_half_close_sends_what_is_held_first_and_an_abort_drops_it() -> None:
    async def run(end: str) -> list[tuple[str, bytes]]:
        under = _Transport()
        coalesced = CoalescedWrites(under, asyncio.get_running_loop())
        coalesced.write(b"answer")
        getattr(coalesced, end)()
        await _turn()  # the flush the write scheduled finds nothing left
        return under.calls

    assert asyncio.run(run("close")) == [("write", b"answer"), ("close", b"")]
    assert asyncio.run(run("write_eof")) == [("write", b"answer"), ("eof", b"")]
    assert asyncio.run(run("abort")) == [("abort", b"")]
