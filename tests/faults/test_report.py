"""docs/reliability.md is rendered from the fault suite's rows: one line per run, every column."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

from tests.faults.faults import FAULTS
from tests.faults.report import COMMAND, NOTES, render
from tests.faults.run import Row


def test_every_row_becomes_a_line_of_the_table() -> None:
    def row(fault: str, backend: str, **fields: object) -> Row:
        base: dict[str, object] = {
            "jobs": 5000, "faults": 6, "lost": 0, "duplicate_completions": 0,
            "stale_completions": 0, "extra_executions": 0, "finished_redone": 0,
            "left_running": 0, "recovery_s": [0.0], "longest_stall_s": 0.0,
            "elapsed_s": 30.0, "seed": 1,
        }  # fmt: skip
        return Row(fault=fault, backend=backend, **{**base, **fields})  # type: ignore[arg-type]

    rows = [
        row("kill", "sqlite", extra_executions=31, finished_redone=4,
            recovery_s=[2.5, 2.1, 2.2], longest_stall_s=0.2),
        row("restart", "postgres", lost=1, duplicate_completions=2, stale_completions=3,
            recovery_s=[0.3], longest_stall_s=0.5, seed=8,
            events={"held_up": 3, "started": 3}, load=1.5),
    ]  # fmt: skip
    text = render([asdict(r) for r in rows], generated=datetime(2026, 1, 1, tzinfo=UTC))
    assert COMMAND in text
    assert "| kill | sqlite | 5,000 | 6 | 0 | 0 | 0 | 31 | 4 | 2.50 s / 2.20 s | 0.20 s |" in text
    assert (
        "| restart | postgres | 5,000 | 6 | 1 | 2 | 3 | 0 | 0 | 0.30 s / 0.30 s | 0.50 s |" in text
    )
    assert (
        "| restart | postgres | 8 | 30.0 s | 1.5 | held_up 3 |" in text
    )  # routine events left out
    assert text.index("| kill |") < text.index("| restart |")  # in the order of FAULTS
    assert all(f"- **{name}**" in text for name in NOTES)  # every fault explained


def test_every_fault_has_a_note() -> None:
    assert {fault.name for fault in FAULTS} == set(NOTES)
