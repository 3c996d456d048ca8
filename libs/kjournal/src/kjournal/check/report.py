"""A topic's check, as the table an operator reads and as JSON for tools."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from kjournal.check.findings import Finding
from kjournal.check.findings import JournalResult

__all__ = ["TopicReport"]


@dataclass
class TopicReport:
    topic: str
    mode: str  # spark, local
    partitions: int = 0
    journals: int = 0  # compared
    events: int = 0  # the fold's events compared
    records: int = 0  # Kafka records folded
    seconds: float = 0.0  # the whole run over the topic, the Spark session's start included
    pass_seconds: float = 0.0  # the pass alone: reading Kafka, folding, comparing
    differing: list[JournalResult] = field(default_factory=list)
    partition_findings: list[tuple[int, Finding]] = field(default_factory=list)
    unchecked: list[JournalResult] = field(default_factory=list)
    repaired: dict[str, str] = field(default_factory=dict)  # journal id → what the repair did
    pointer2_repaired: dict[int, int] = field(default_factory=dict)  # partition → pointer2 set
    repair_requested: bool = False

    @property
    def differs(self) -> bool:
        return bool(self.differing or self.partition_findings)

    @property
    def clean_after_repair(self) -> bool:
        """Everything found was repaired and found the same afterwards."""
        return (
            self.repair_requested
            and all(self.repaired.get(r.key.id) == "repaired" for r in self.differing)
            and all(p in self.pointer2_repaired for p, _ in self.partition_findings)
        )

    def table(self) -> str:
        lines = [
            f"kjournal check {self.topic} ({self.mode}): {self.partitions} partitions, "
            f"{self.records} records, {self.journals} journals, {self.events} events compared "
            f"in {self.seconds:.1f} s (the pass {self.pass_seconds:.1f} s)"
        ]
        rows = []
        for result in sorted(self.differing, key=lambda r: (r.partition, r.key.id)):
            status = self.repaired.get(result.key.id, "")
            for finding in result.findings:
                rows.append(
                    (
                        str(result.partition),
                        result.key.id,
                        finding.kind.value,
                        finding.detail,
                        status,
                    )
                )
        for partition, finding in sorted(self.partition_findings, key=lambda p: p[0]):
            status = ""
            if partition in self.pointer2_repaired:
                status = f"repaired: pointer2 {self.pointer2_repaired[partition]}"
            rows.append((str(partition), "", finding.kind.value, finding.detail, status))
        if rows:
            headers = (
                "partition",
                "journal",
                "difference",
                "detail",
                *(("repair",) if self.repair_requested else ()),
            )
            cells = [row if self.repair_requested else row[:4] for row in rows]
            widths = [
                max(len(str(c)) for c in column) for column in zip(headers, *cells, strict=True)
            ]
            widths[3] = min(widths[3], 100)
            lines.append("")
            lines.append(
                "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
            )
            for cell in cells:
                lines.append(
                    "  ".join(str(c).ljust(w) for c, w in zip(cell, widths, strict=True)).rstrip()
                )
        if self.unchecked:
            lines.append("")
            by_reason: dict[str, list[str]] = {}
            for result in self.unchecked:
                assert result.unchecked is not None
                by_reason.setdefault(result.unchecked.value, []).append(result.key.id)
            for reason, ids in sorted(by_reason.items()):
                shown = ", ".join(sorted(ids)[:10]) + (
                    f" and {len(ids) - 10} more" if len(ids) > 10 else ""
                )
                lines.append(f"not checked ({reason}): {len(ids)} journals: {shown}")
        lines.append("")
        journals = len({r.key.id for r in self.differing})
        if not self.differs and self.unchecked:
            lines.append(
                f"result: no difference in what could be compared; {len(self.unchecked)} "
                "journals not checked (above)"
            )
        elif not self.differs:
            lines.append("result: Cassandra matches the fold of Kafka")
        elif self.repair_requested:
            verdict = "all repaired" if self.clean_after_repair else "NOT all repaired"
            lines.append(
                f"result: {journals} journals and {len(self.partition_findings)} pointers "
                f"differed; {verdict}"
            )
        else:
            lines.append(
                f"result: {journals} journals and {len(self.partition_findings)} pointers differ"
            )
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "mode": self.mode,
            "partitions": self.partitions,
            "records": self.records,
            "journals": self.journals,
            "events": self.events,
            "seconds": round(self.seconds, 3),
            "passSeconds": round(self.pass_seconds, 3),
            "differs": self.differs,
            "differences": [
                {
                    "id": result.key.id,
                    "partition": result.partition,
                    "findings": [
                        {"kind": finding.kind.value, "detail": finding.detail}
                        for finding in result.findings
                    ],
                    **(
                        {"repair": self.repaired.get(result.key.id, "not repaired")}
                        if self.repair_requested
                        else {}
                    ),
                }
                for result in sorted(self.differing, key=lambda r: (r.partition, r.key.id))
            ],
            "pointer2": [
                {
                    "partition": partition,
                    "kind": finding.kind.value,
                    "detail": finding.detail,
                    **(
                        {"repairedTo": self.pointer2_repaired[partition]}
                        if partition in self.pointer2_repaired
                        else {}
                    ),
                }
                for partition, finding in sorted(self.partition_findings, key=lambda p: p[0])
            ],
            "unchecked": [
                {
                    "id": r.key.id,
                    "partition": r.partition,
                    "reason": r.unchecked.value if r.unchecked else "",
                }
                for r in sorted(self.unchecked, key=lambda r: (r.partition, r.key.id))
            ],
        }
