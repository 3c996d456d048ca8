"""Replication folding, table-driven: kafka-journal's BatchSpec scenarios.

Deliberate differences from the Scala expectations:
* a delete that takes the place of a newer, smaller delete keeps the newer offset ("ours");
* batches remember what their dropped appends imply: `dropped_from` on the appends that follow
  appends dropped by a later delete, `dropped` on a purge.
"""

from __future__ import annotations

import pytest
from kjournal.fold.batch import Batch
from kjournal.fold.batch import fold_batches
from kjournal.model import ActionRecord
from kjournal.testing.records import append
from kjournal.testing.records import appends
from kjournal.testing.records import delete
from kjournal.testing.records import deletes
from kjournal.testing.records import mark
from kjournal.testing.records import purge
from kjournal.testing.records import purges

CASES: list[tuple[str, list[ActionRecord], list[Batch]]] = [
    ("mark", [mark(0)], []),
    ("marks", [mark(0), mark(1)], []),
    ("append", [append(0, 1)], [appends(0, append(0, 1))]),
    ("append of two", [append(0, 1, 2)], [appends(0, append(0, 1, 2))]),
    (
        "appends merge",
        [append(0, 1, 2), append(1, 3, 4)],
        [appends(1, append(0, 1, 2), append(1, 3, 4))],
    ),
    ("append, mark", [append(0, 1), mark(1)], [appends(0, append(0, 1))]),
    ("mark, append", [mark(0), append(1, 1)], [appends(1, append(1, 1))]),
    (
        "append, append",
        [append(0, 1), append(1, 2)],
        [appends(1, append(0, 1), append(1, 2))],
    ),
    (
        "marks between appends",
        [mark(0), append(1, 1), mark(2), append(3, 2), mark(4)],
        [appends(3, append(1, 1), append(3, 2))],
    ),
    ("delete", [delete(1, 1)], [deletes(1, 1)]),
    ("mark, delete", [mark(1), delete(2, 1)], [deletes(2, 1)]),
    ("delete, mark", [delete(1, 1), mark(2)], [deletes(1, 1)]),
    (
        "delete, append",
        [delete(1, 1), append(2, 2)],
        [deletes(1, 1), appends(2, append(2, 2))],
    ),
    (
        "append, delete below it",
        [append(1, 2), delete(2, 1)],
        [appends(1, append(1, 2)), deletes(2, 1)],
    ),
    (
        "append, delete inside it",
        [append(1, 1, 3), delete(2, 1)],
        [appends(1, append(1, 1, 3)), deletes(2, 1)],
    ),
    (
        "append, delete, append",
        [append(1, 1), delete(2, 1), append(3, 2)],
        [appends(1, append(1, 1)), deletes(2, 1), appends(3, append(3, 2))],
    ),
    (
        "a later delete drops an earlier one and the appends it covers",
        [append(1, 1), delete(2, 1, "origin1"), append(3, 2), delete(4, 2, "origin2")],
        [appends(3, append(3, 2), dropped_from=1), deletes(4, 2, "origin2")],
    ),
    (
        "the same, the dropped delete with an origin",
        [append(1, 1), delete(2, 1, "origin"), append(3, 2), delete(4, 2)],
        [appends(3, append(3, 2), dropped_from=1), deletes(4, 2)],
    ),
    (
        "two appends, two deletes",
        [append(1, 1), append(2, 2), delete(3, 1, "origin1"), delete(4, 2, "origin2")],
        [appends(2, append(2, 2), dropped_from=1), deletes(4, 2, "origin2")],
    ),
    (
        "two appends, two deletes, the last with an origin",
        [append(1, 1), append(2, 2), delete(3, 1), delete(4, 2, "origin")],
        [appends(2, append(2, 2), dropped_from=1), deletes(4, 2, "origin")],
    ),
    ("delete, bigger delete", [delete(2, 1), delete(3, 2)], [deletes(3, 2)]),
    (
        "delete, smaller delete (ours: the newer offset)",
        [delete(2, 2, "origin"), delete(3, 1)],
        [deletes(3, 2, "origin")],
    ),
    (
        "deletes between marks",
        [mark(2), delete(3, 1, "origin"), mark(4), delete(5, 2), mark(6)],
        [deletes(5, 2)],
    ),
    (
        "alternating appends and deletes",
        [append(0, 1), delete(1, 1), append(2, 2), delete(3, 2), append(4, 3)],
        [appends(2, append(2, 2), dropped_from=1), deletes(3, 2), appends(4, append(4, 3))],
    ),
    (
        "alternating, two appends first",
        [append(0, 1), append(1, 2), delete(2, 1), append(3, 3), delete(4, 3), append(5, 4)],
        [appends(3, append(3, 3), dropped_from=1), deletes(4, 3), appends(5, append(5, 4))],
    ),
    (
        "marks do not split batches",
        [
            append(0, 1),
            append(1, 2),
            mark(2),
            delete(3, 1),
            append(4, 3),
            append(5, 4),
            mark(6),
        ],
        [
            appends(1, append(1, 2), dropped_from=1),
            deletes(3, 1),
            appends(5, append(4, 3), append(5, 4)),
        ],
    ),
    (
        "a later delete drops the covered prefix of merged appends",
        [
            append(0, 1),
            append(1, 2),
            append(2, 3),
            delete(3, 1, "origin"),
            append(4, 4),
            append(5, 5),
            delete(6, 2),
            append(7, 6),
        ],
        [
            appends(5, append(2, 3), append(4, 4), append(5, 5), dropped_from=1),
            deletes(6, 2),
            appends(7, append(7, 6)),
        ],
    ),
    (
        "the same with ranges",
        [
            append(0, 1, 2),
            append(1, 3, 4),
            append(2, 5),
            delete(3, 1),
            append(4, 6),
            append(5, 7),
            delete(6, 3),
            append(7, 8),
        ],
        [
            appends(5, append(1, 3, 4), append(2, 5), append(4, 6), append(5, 7), dropped_from=1),
            deletes(6, 3),
            appends(7, append(7, 8)),
        ],
    ),
    ("purge", [purge(0)], [purges(0)]),
    ("mark, purge", [mark(0), purge(1)], [purges(1)]),
    ("purge, mark", [purge(0), mark(1)], [purges(0)]),
    ("purge, mark, purge", [purge(0, "origin"), mark(1), purge(2)], [purges(2)]),
    (
        "purge, mark, purge with origins",
        [purge(0, "origin0"), mark(1), purge(2, "origin")],
        [purges(2, "origin")],
    ),
    (
        "append, purge (ours: dropped)",
        [append(0, 1), purge(1)],
        [purges(1, dropped=((1, 1),))],
    ),
    (
        "purge, append",
        [purge(0), append(1, 1)],
        [purges(0), appends(1, append(1, 1))],
    ),
    ("delete, purge", [delete(0, 1), purge(1)], [purges(1)]),
    ("purge, delete", [purge(0), delete(1, 1)], [purges(0), deletes(1, 1)]),
    ("delete, delete", [delete(0, 1), delete(1, 2)], [deletes(1, 2)]),
    (
        "appends, two deletes",
        [append(0, 1, 2), append(1, 3, 4), append(2, 5, 6), delete(3, 3), delete(4, 5)],
        [appends(2, append(2, 5, 6), dropped_from=1), deletes(4, 5)],
    ),
    (
        "append, deletes covering it partly then wholly",
        [append(0, 1, 6), delete(1, 3), delete(2, 6)],
        [appends(0, append(0, 1, 6)), deletes(2, 6)],
    ),
    (
        "two appends, deletes covering the first",
        [append(0, 1, 4), append(1, 5, 6), delete(2, 3), delete(3, 6)],
        [appends(1, append(1, 5, 6), dropped_from=1), deletes(3, 6)],
    ),
    (
        "two appends, delete inside the first",
        [append(0, 1, 4), append(1, 5, 6), delete(2, 3)],
        [appends(1, append(0, 1, 4), append(1, 5, 6)), deletes(2, 3)],
    ),
    (
        "delete, smaller delete (ours: the newer offset)",
        [delete(1, 10), delete(2, 6)],
        [deletes(2, 10)],
    ),
    (
        "PR #676: appends then a delete of the last",
        [append(1797039, 574), append(1801629, 575), mark(1801632), delete(1801642, 575)],
        [appends(1801629, append(1801629, 575), dropped_from=574), deletes(1801642, 575)],
    ),
    # Beyond BatchSpec.
    (
        "appends before a purge are its dropped ranges, adjacent ones merged",
        [append(0, 1, 3), append(1, 4, 9), delete(2, 5), purge(3), append(4, 1)],
        [purges(3, dropped=((1, 9),)), appends(4, append(4, 1))],
    ),
    (
        "purges: the older one is dropped, its appends still counted",
        [append(0, 1, 7), purge(1), append(2, 1, 2), purge(3)],
        [purges(3, dropped=((1, 7),))],
    ),
    (
        "incarnations far apart stay apart: no span of empty segments between them",
        [append(0, 1, 2), purge(1), append(2, 2**62, 2**62 + 1), purge(3)],
        [purges(3, dropped=((1, 2), (2**62, 2**62 + 1)))],
    ),
    (
        "a delete equal to the later one is dropped",
        [append(0, 1, 2), delete(1, 2), append(2, 3), delete(3, 2)],
        [appends(2, append(2, 3), dropped_from=1), deletes(3, 2)],
    ),
    ("empty", [], []),
]


@pytest.mark.parametrize(
    ("actions", "expected"),
    [pytest.param(actions, expected, id=name) for name, actions, expected in CASES],
)
def test_fold(actions: list[ActionRecord], expected: list[Batch]) -> None:
    assert fold_batches(actions) == expected


def test_fold_accepts_any_iterable() -> None:
    assert fold_batches(iter([append(0, 1), delete(1, 1)])) == [
        appends(0, append(0, 1)),
        deletes(1, 1),
    ]


def test_batch_offsets_increase() -> None:
    actions = [append(0, 1), delete(1, 1), append(2, 2), purge(3), append(4, 1), delete(5, 1)]
    offsets = [batch.offset for batch in fold_batches(actions)]
    assert offsets == sorted(offsets)
    assert offsets[-1] == 5
