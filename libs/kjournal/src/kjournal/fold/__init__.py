"""Pure folds over actions, no I/O: the read side's HeadInfo, the replicator's batches and plans."""

from kjournal.fold.batch import AppendRecord
from kjournal.fold.batch import Appends
from kjournal.fold.batch import Batch
from kjournal.fold.batch import DeleteBatch
from kjournal.fold.batch import PurgeBatch
from kjournal.fold.batch import fold_batches
from kjournal.fold.head_info import HeadInfo
from kjournal.fold.head_info import fold_head_info
from kjournal.fold.plan import DeleteHead
from kjournal.fold.plan import DeleteRows
from kjournal.fold.plan import InsertHead
from kjournal.fold.plan import InsertRows
from kjournal.fold.plan import Plan
from kjournal.fold.plan import Step
from kjournal.fold.plan import UpdateHead
from kjournal.fold.plan import Write
from kjournal.fold.plan import expire_on
from kjournal.fold.plan import journal_segment
from kjournal.fold.plan import plan_append
from kjournal.fold.plan import plan_delete
from kjournal.fold.plan import plan_purge

__all__ = [
    "AppendRecord",
    "Appends",
    "Batch",
    "DeleteBatch",
    "DeleteHead",
    "DeleteRows",
    "HeadInfo",
    "InsertHead",
    "InsertRows",
    "Plan",
    "PurgeBatch",
    "Step",
    "UpdateHead",
    "Write",
    "expire_on",
    "fold_batches",
    "fold_head_info",
    "journal_segment",
    "plan_append",
    "plan_delete",
    "plan_purge",
]
