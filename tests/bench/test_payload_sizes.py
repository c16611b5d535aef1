"""bench.payload_sizes: the worker drains every padded job once at each size, and the jobs
it drains carry the padding asked for."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from venturi.testing import run_handler

from bench.generated.tasks import Padded
from bench.handlers.padded import PaddedHandler

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_every_size_is_drained_and_its_jobs_carry_the_padding() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.payload_sizes", "--reps", "1", "--jobs", "1500",
         "--sizes", "0,800", "--db-suffix", f"_t{uuid.uuid4().hex[:8]}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = done.stdout + done.stderr
    # A run that completes fewer jobs than it enqueued, or any twice, exits with an error.
    assert done.returncode == 0, out
    rows = {
        int(m.group(1).replace(",", "")): [float(v.replace(",", "")) for v in m.groups()[1:]]
        for m in re.finditer(
            r"^ +\+([0-9,]+) B +([0-9,]+) +\d+% +([0-9.]+) +([0-9.]+) +([0-9,]+) +([0-9,.]+) ",
            done.stdout, re.MULTILINE,
        )
    }  # fmt: skip
    assert set(rows) == {0, 800}, out
    assert all(value > 0 for row in rows.values() for value in row), out
    # The stored payloads are 800 bytes longer, exactly: the padding reached the row. (The
    # WAL is the whole server's, other tests' writes included, so it is not compared here.)
    assert rows[800][4] - rows[0][4] == 800, out


def test_bad_sizes_are_refused_with_the_reason() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.payload_sizes", "--sizes", "0,-5"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "none below 0" in done.stderr, done.stderr


async def test_the_padded_handler_completes_at_once() -> None:
    ran = await run_handler(PaddedHandler(), Padded(n=1, pad="x" * 10), state=None)
    assert ran.completed and ran.error is None
