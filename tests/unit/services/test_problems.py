"""The error ↔ problem table, both directions, and how validation errors are shown."""

from __future__ import annotations

import json

import pytest
from kjournal import errors
from kjournal.api.problems import ERROR_PROBLEMS
from kjournal.api.problems import PROBLEM_TYPE_PREFIX
from kjournal.api.problems import error_for_problem
from kjournal.api.problems import problem_for_error
from kjournal.api.problems import validation_problem
from kjournal.api.schemas import Problem
from kjournal_service.problems import problem_response


def _example(cls: type[errors.KJournalError]) -> errors.KJournalError:
    if cls is errors.UnknownTopic:
        return errors.UnknownTopic("journal_x")
    if cls is errors.RecordTooLarge:
        return errors.RecordTooLarge(2_000_000, 1_000_000)
    if cls is errors.NestedTooDeeply:
        return errors.NestedTooDeeply(64)
    if cls is errors.JournalQuarantined:
        return errors.JournalQuarantined("journal", "a", 3, 1234, "bad header")
    if cls is errors.TopicRepartitioned:
        return errors.TopicRepartitioned("journal", "a", 1, 2)
    return cls(f"a {cls.__name__}")


EXPECTED = {
    errors.UnknownTopic: (404, "unknown-topic"),
    errors.RecordTooLarge: (413, "record-too-large"),
    errors.NestedTooDeeply: (400, "too-deep"),
    errors.InvalidKey: (400, "invalid-key"),
    errors.EmptyAppend: (400, "empty-batch"),
    errors.SeqNrOrderError: (400, "seq-nr-order"),
    errors.InvalidSeqNr: (400, "invalid-seq-nr"),
    errors.InvalidPayload: (400, "invalid-payload"),
    errors.InvalidDuration: (400, "invalid-duration"),
    errors.InvalidInput: (400, "invalid-input"),
    errors.JournalNotFound: (404, "journal-not-found"),
    errors.JournalQuarantined: (500, "journal-quarantined"),
    errors.TopicRepartitioned: (500, "topic-repartitioned"),
    errors.FormatError: (500, "format-error"),
    errors.HeaderFormatError: (500, "format-error"),
    errors.SchemaError: (500, "schema-error"),
    errors.KafkaUnavailable: (503, "kafka-unavailable"),
    errors.CassandraUnavailable: (503, "cassandra-unavailable"),
    errors.Unavailable: (503, "unavailable"),
    errors.DeadlineExceeded: (504, "deadline-exceeded"),
    errors.NotAuthenticated: (401, "unauthorized"),
    errors.PermissionDenied: (403, "forbidden"),
    errors.RequestRejected: (400, "request-rejected"),
    errors.Busy: (503, "busy"),
    errors.CredentialsRefused: (500, "credentials-refused"),
    errors.KJournalError: (500, "internal-error"),
}


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda cls: cls.__name__)
def test_each_error_has_its_problem_and_comes_back(cls: type[errors.KJournalError]):
    error = _example(cls)
    problem = problem_for_error(error, "/v1/journals/journal/a")
    status, slug = EXPECTED[cls]
    assert (problem.status, problem.type) == (status, PROBLEM_TYPE_PREFIX + slug)
    assert problem.detail == str(error)
    assert problem.instance == "/v1/journals/journal/a"

    back = error_for_problem(Problem.model_validate_json(problem.model_dump_json()))
    expected_class = errors.KJournalError if cls is errors.TopicRepartitioned else cls
    if cls is errors.HeaderFormatError:
        expected_class = errors.FormatError  # one problem type for all format errors
    assert type(back) is expected_class
    assert str(back) == str(error)


def test_every_error_class_is_in_the_table():
    table = {spec.error for spec in ERROR_PROBLEMS}
    leaves = {
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.KJournalError)
    }
    # Subclasses not in the table share their parent's problem (HeaderFormatError → format-error).
    for cls in leaves - table:
        assert any(issubclass(cls, listed) for listed in table - {errors.KJournalError}), cls


def test_extras_name_the_offset_of_a_quarantined_journal():
    body = json.loads(problem_response(problem_for_error(_example(errors.JournalQuarantined))).body)
    assert body["partition"] == 3
    assert body["offset"] == 1234
    assert body["reason"] == "bad header"
    back = error_for_problem(Problem.model_validate(body))
    assert isinstance(back, errors.JournalQuarantined)
    assert back.offset == 1234


def test_unavailable_answers_carry_retry_after():
    rendered = problem_response(problem_for_error(errors.CassandraUnavailable("down")), 3)
    assert ("retry-after", "3") in rendered.headers
    assert ("content-type", "application/problem+json") in rendered.headers
    rendered = problem_response(problem_for_error(errors.EmptyAppend("x")), 3)
    assert all(name != "retry-after" for name, _ in rendered.headers)


def test_validation_errors_name_each_field():
    problem = validation_problem(
        [
            {"loc": ("body", "events", 0, "seqNr"), "msg": "too small"},
            {"loc": ("query", "from"), "msg": "not an integer"},
            {"loc": ("body",), "msg": "JSON decode error"},
        ],
        "/x",
    )
    assert problem.status == 400
    assert problem.detail == "events[0].seqNr: too small (and 2 more)"
    assert problem.extras["errors"] == [
        {
            "location": "body",
            "field": "events[0].seqNr",
            "detail": "too small",
            "pointer": "#/events/0/seqNr",
        },
        {"location": "query", "field": "from", "detail": "not an integer"},
        {"location": "body", "field": "body", "detail": "JSON decode error", "pointer": "#"},
    ]
    assert type(error_for_problem(problem)) is errors.InvalidInput


def test_an_invalid_mapping_key_is_named_as_the_key_not_a_member():
    problem = validation_problem(
        [
            {"loc": ("body", "headers", "", "[key]"), "msg": "too short"},
            {"loc": ("body", "headers", "a.b"), "msg": "not a string"},
        ]
    )
    fields = [(item["field"], item["pointer"]) for item in problem.extras["errors"]]
    assert fields == [('headers[""]', "#/headers/"), ("headers.a.b", "#/headers/a.b")]


def test_an_unknown_problem_type_is_a_plain_kjournal_error():
    back = error_for_problem(Problem(type="https://example.org/x", title="Teapot", status=418))
    assert type(back) is errors.KJournalError
    assert "418 Teapot" in str(back)
