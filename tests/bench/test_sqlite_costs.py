"""bench.sqlite_costs: both drains complete every job, and a worker's batch of no-op
completions takes the statements meant for it (by lease, journal in one statement), not
the row-by-row fallbacks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_costs_of_both_drains_name_the_batch_statements() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.sqlite_costs", "--jobs", "3000", "--reps", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out  # each drain completed all 3,000 jobs, or it failed
    tables = re.split(r"^== ", done.stdout, flags=re.MULTILINE)[1:]
    assert [t.split(":")[0] for t in tables] == ["alone", "in a worker"], out
    for table in tables:
        names = set(re.findall(r"^  (\S+(?: \S+)?) +[0-9.]+ µs/job$", table, re.MULTILINE))
        assert {"lease_rows", "complete_leased", "insert_journals", "COMMIT"} <= names, table
        assert not names & {"complete_run", "insert_journal", "end_run"}, table
        share = re.search(r"\((\d+)% of the time\)", table)
        assert share is not None and 0 < int(share.group(1)) <= 100, table
    # A worker's finishes go through finish_and_claim (its claim may join them): timed,
    # or the worker's storage calls would count as next to nothing.
    assert "python: finish_and_claim" in tables[1], tables[1]
