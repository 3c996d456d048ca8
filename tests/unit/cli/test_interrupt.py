"""Ctrl-C in `kjournal tail`: the first SIGINT asks it to stop, the second interrupts."""

from __future__ import annotations

import os
import signal

import pytest
from kjournal.cli.interrupt import stop_on_interrupt


def test_the_first_interrupt_sets_the_event_and_raises_nothing():
    with stop_on_interrupt() as stopped:
        assert not stopped.is_set()
        os.kill(os.getpid(), signal.SIGINT)
        assert stopped.wait(5)


def _interrupt_twice() -> None:
    with stop_on_interrupt() as stopped:
        os.kill(os.getpid(), signal.SIGINT)
        assert stopped.wait(5)
        os.kill(os.getpid(), signal.SIGINT)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a bytecode boundary for the handler


def test_a_second_interrupt_raises_keyboard_interrupt():
    with pytest.raises(KeyboardInterrupt):
        _interrupt_twice()


def test_the_previous_handler_is_back_after_the_block():
    before = signal.getsignal(signal.SIGINT)
    with stop_on_interrupt():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before
