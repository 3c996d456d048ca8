"""The reader's answer to a batch of outcome questions (kjournal_reader/routes/outcomes.py): one
body when every answer comes with the first, else the first answers and then each later one as
it is decided; the questions still waiting are cancelled when the stream is closed early."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest
from kjournal.api.keys import KeyRules
from kjournal.api.schemas import OutcomeQuestionIn
from kjournal.model import AppendOutcome
from kjournal.model import Key
from kjournal.model import Outcome
from kjournal.model import PartitionOffset
from kjournal_reader.routes.outcomes import _Answers

TOPIC = "journal-answers"


def _taken(offset: int) -> AppendOutcome:
    return AppendOutcome(
        Outcome.TAKEN, 1, PartitionOffset(0, offset), datetime(2026, 12, 7, tzinfo=UTC)
    )


class _Outcomes:
    """Offsets in `decided` are known at once; the others wait until `decide` is called."""

    def __init__(self, decided: set[int]) -> None:
        self.decided = decided
        self.pending: dict[int, asyncio.Event] = {}
        self.cancelled: list[int] = []

    def known(self, key: Key, offset: int) -> AppendOutcome | None:
        return _taken(offset) if offset in self.decided else None

    async def outcome(self, key: Key, offset: int) -> AppendOutcome:
        event = self.pending.setdefault(offset, asyncio.Event())
        try:
            await event.wait()
        except asyncio.CancelledError:
            self.cancelled.append(offset)
            raise
        return _taken(offset)

    def decide(self, offset: int) -> None:
        self.pending.setdefault(offset, asyncio.Event()).set()


def _answers(outcomes: _Outcomes, offsets: list[int]) -> _Answers:
    questions = [OutcomeQuestionIn(id=f"j{offset}", offset=offset) for offset in offsets]
    return _Answers(outcomes, KeyRules(), TOPIC, questions)  # type: ignore[arg-type]


def _lines(chunk: bytes) -> list[tuple[int, Any]]:
    return [
        (line["i"], line["outcome"]["offset"])
        for line in map(json.loads, chunk.decode().splitlines())
    ]


@pytest.mark.anyio
async def test_answers_decided_already_are_one_body() -> None:
    answers = _answers(_Outcomes({7, 8}), [7, 8])
    first = await answers.first()
    assert answers.finished
    assert _lines(first) == [(0, 7), (1, 8)]


@pytest.mark.anyio
async def test_one_question_waits_for_its_answer_and_is_one_body() -> None:
    outcomes = _Outcomes(set())
    answers = _answers(outcomes, [7])
    first = asyncio.create_task(answers.first())
    await asyncio.sleep(0)
    assert not first.done()
    outcomes.decide(7)
    assert _lines(await first) == [(0, 7)]
    assert answers.finished


@pytest.mark.anyio
async def test_later_answers_stream_as_they_are_decided() -> None:
    outcomes = _Outcomes({7})
    answers = _answers(outcomes, [7, 8, 9])
    first = await answers.first()
    assert not answers.finished
    stream = answers.rest(first)
    assert _lines(await anext(stream)) == [(0, 7)]
    outcomes.decide(9)
    assert _lines(await anext(stream)) == [(2, 9)]
    outcomes.decide(8)
    assert _lines(await anext(stream)) == [(1, 8)]
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


@pytest.mark.anyio
async def test_closing_the_stream_early_cancels_the_questions_still_waiting() -> None:
    outcomes = _Outcomes({7})
    answers = _answers(outcomes, [7, 8])
    stream = answers.rest(await answers.first())
    assert _lines(await anext(stream)) == [(0, 7)]
    await asyncio.sleep(0)
    assert list(outcomes.pending) == [8]  # its question waits
    await stream.aclose()
    await asyncio.sleep(0)
    assert outcomes.cancelled == [8]


@pytest.mark.anyio
async def test_a_cancelled_wait_for_the_first_answers_cancels_every_question() -> None:
    outcomes = _Outcomes(set())
    answers = _answers(outcomes, [7, 8])
    first = asyncio.create_task(answers.first())
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.sleep(0)
    assert sorted(outcomes.cancelled) == [7, 8]
