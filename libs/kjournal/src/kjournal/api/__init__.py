"""The HTTP API's shared half: body schemas, conversions, problem mapping and key rules.

Used by the writer and reader services (which add FastAPI on top) and by `kjournal.client`.
Framework-free: nothing here imports FastAPI or Starlette.
"""

from kjournal.api.convert import (
    AppendArgs,
    append_args,
    append_outcome_from_out,
    append_outcome_out,
    append_request_body,
    append_response,
    append_response_json,
    append_result,
    event_record_from_json,
    event_record_to_json,
    journal_status_from_out,
    journal_status_out,
)
from kjournal.api.keys import KeyRules, quote_segment
from kjournal.api.problems import (
    ERROR_PROBLEMS,
    PROBLEM_CONTENT_TYPE,
    PROBLEM_TYPE_PREFIX,
    ProblemSpec,
    error_for_problem,
    problem_for_error,
    validation_problem,
)
from kjournal.api.schemas import (
    AppendOutcomeOut,
    AppendRequest,
    AppendResponse,
    EventIn,
    EventOut,
    JournalIdOut,
    JournalStatusOut,
    MarkRequest,
    MarkResponse,
    PointerOut,
    PositionOut,
    Problem,
    ReplicationOut,
)

__all__ = [
    "ERROR_PROBLEMS",
    "PROBLEM_CONTENT_TYPE",
    "PROBLEM_TYPE_PREFIX",
    "AppendArgs",
    "AppendOutcomeOut",
    "AppendRequest",
    "AppendResponse",
    "EventIn",
    "EventOut",
    "JournalIdOut",
    "JournalStatusOut",
    "KeyRules",
    "MarkRequest",
    "MarkResponse",
    "PointerOut",
    "PositionOut",
    "Problem",
    "ProblemSpec",
    "ReplicationOut",
    "append_args",
    "append_outcome_from_out",
    "append_outcome_out",
    "append_request_body",
    "append_response",
    "append_response_json",
    "append_result",
    "error_for_problem",
    "event_record_from_json",
    "event_record_to_json",
    "journal_status_from_out",
    "journal_status_out",
    "problem_for_error",
    "quote_segment",
    "validation_problem",
]
