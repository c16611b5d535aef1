"""bench.completion_costs: both completion statements end every run they are given, and
the tool prints the server's CPU for each."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_both_statements_are_timed_and_end_every_run() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.completion_costs", "--rounds", "2",
         "--db-suffix", f"_t{uuid.uuid4().hex[:8]}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = done.stdout + done.stderr
    # A finish that ends fewer runs than it was given exits with an error instead.
    assert done.returncode == 0, out
    rows = dict(re.findall(r"^(complete_runs|end_runs) +([0-9.]+) +[0-9.]+$", done.stdout, re.M))
    assert set(rows) == {"complete_runs", "end_runs"}, out
    assert all(float(ms) > 0 for ms in rows.values()), out
