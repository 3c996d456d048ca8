"""The HTTP API's shared half: body schemas, conversions, problem mapping and key rules.

Used by the writer and reader services (which add FastAPI on top) and by `kjournal.client`.
Framework-free: nothing here imports FastAPI or Starlette.
"""

from kjournal.api.convert import AppendArgs
from kjournal.api.convert import append_args
from kjournal.api.convert import append_outcome_from_out
from kjournal.api.convert import append_outcome_json
from kjournal.api.convert import append_outcome_out
from kjournal.api.convert import append_request_body
from kjournal.api.convert import append_response
from kjournal.api.convert import append_response_json
from kjournal.api.convert import append_result
from kjournal.api.convert import event_record_from_json
from kjournal.api.convert import event_record_to_json
from kjournal.api.convert import journal_status_from_out
from kjournal.api.convert import journal_status_out
from kjournal.api.keys import KeyRules
from kjournal.api.keys import quote_segment
from kjournal.api.problems import ERROR_PROBLEMS
from kjournal.api.problems import PROBLEM_CONTENT_TYPE
from kjournal.api.problems import PROBLEM_TYPE_PREFIX
from kjournal.api.problems import ProblemSpec
from kjournal.api.problems import error_for_problem
from kjournal.api.problems import problem_for_error
from kjournal.api.problems import validation_problem
from kjournal.api.schemas import AppendOutcomeOut
from kjournal.api.schemas import AppendRequest
from kjournal.api.schemas import AppendResponse
from kjournal.api.schemas import EventIn
from kjournal.api.schemas import EventOut
from kjournal.api.schemas import JournalIdOut
from kjournal.api.schemas import JournalStatusOut
from kjournal.api.schemas import MarkRequest
from kjournal.api.schemas import MarkResponse
from kjournal.api.schemas import OutcomeLineOut
from kjournal.api.schemas import OutcomeQuestionIn
from kjournal.api.schemas import OutcomesRequest
from kjournal.api.schemas import PointerOut
from kjournal.api.schemas import PositionOut
from kjournal.api.schemas import Problem
from kjournal.api.schemas import ReplicationOut

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
    "OutcomeLineOut",
    "OutcomeQuestionIn",
    "OutcomesRequest",
    "PointerOut",
    "PositionOut",
    "Problem",
    "ProblemSpec",
    "ReplicationOut",
    "append_args",
    "append_outcome_from_out",
    "append_outcome_json",
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
