"""Pure folds over actions, no I/O: the read side's HeadInfo, the replicator's batches and plans."""

from kjournal.fold.batch import (
    AppendRecord,
    Appends,
    Batch,
    DeleteBatch,
    PurgeBatch,
    fold_batches,
)
from kjournal.fold.head_info import HeadInfo, fold_head_info
from kjournal.fold.plan import (
    DeleteHead,
    DeleteRows,
    InsertHead,
    InsertRows,
    Plan,
    Step,
    UpdateHead,
    Write,
    expire_on,
    journal_segment,
    plan_append,
    plan_delete,
    plan_purge,
)

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
