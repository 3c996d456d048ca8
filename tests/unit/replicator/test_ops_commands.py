"""`kjournal check` and `kjournal expire` come from the replicator package's entry point, take no
HTTP client, and report as operators read them."""

from __future__ import annotations

import json

from kjournal.check.findings import Finding
from kjournal.check.findings import JournalResult
from kjournal.check.findings import Kind
from kjournal.check.findings import Unchecked
from kjournal.check.report import TopicReport
from kjournal.cli.main import build_parser
from kjournal.model import Key


def test_the_operators_commands_are_registered_and_run_without_a_client() -> None:
    parser = build_parser()
    check = parser.parse_args(["check", "journal", "journal-b", "--local", "--repair"])
    assert check.topics == ["journal", "journal-b"]
    assert check.local
    assert check.repair
    assert callable(check.run_local)
    expire = parser.parse_args(["expire", "--dry-run", "--max-purges", "5"])
    assert expire.topics == []
    assert expire.dry_run
    assert expire.max_purges == 5
    assert callable(expire.run_local)


def _report(repair: bool) -> TopicReport:
    report = TopicReport("journal", "spark", partitions=4, journals=10, events=100, records=20)
    report.repair_requested = repair
    report.differing = [
        JournalResult(
            Key("journal", "a"), 2, [Finding(Kind.EVENTS_MISSING, "seqNrs 3..4")], events=6
        )
    ]
    report.partition_findings = [(1, Finding(Kind.POINTER2_BEHIND, "pointer2 7 is below 9"))]
    report.unchecked = [
        JournalResult(Key("journal", "old"), 0, unchecked=Unchecked.BEFORE_RETENTION)
    ]
    return report


def test_a_report_names_each_difference_in_a_table_and_in_json() -> None:
    report = _report(repair=False)
    table = report.table()
    assert "kjournal check journal (spark): 4 partitions, 20 records, 10 journals" in table
    assert "2          a        events-missing   seqNrs 3..4" in table
    assert "pointer2-behind" in table
    assert "not checked (history-before-log-start): 1 journals: old" in table
    assert table.endswith("result: 1 journals and 1 pointers differ")
    document = report.as_json()
    assert json.loads(json.dumps(document)) == document
    assert document["differences"] == [
        {
            "id": "a",
            "partition": 2,
            "findings": [{"kind": "events-missing", "detail": "seqNrs 3..4"}],
        }
    ]
    assert document["unchecked"] == [
        {"id": "old", "partition": 0, "reason": "history-before-log-start"}
    ]
    assert report.differs
    assert not report.clean_after_repair


def _clean(report: TopicReport) -> bool:
    return report.clean_after_repair


def test_a_repaired_report_is_clean_only_when_everything_was_repaired() -> None:
    report = _report(repair=True)
    report.repaired = {"a": "repaired"}
    assert not _clean(report)  # pointer2 not repaired yet
    report.pointer2_repaired = {1: 9}
    assert _clean(report)
    assert report.table().endswith("differed; all repaired")
    assert report.as_json()["pointer2"][0]["repairedTo"] == 9
