"""bench.levers: each variant of the schema runs venturi's statements to the end, and the
heap-only claim it measures is one."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bench.levers import VARIANTS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_every_lever_completes_every_job_once_and_the_hot_claim_is_heap_only() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.levers", "--reps", "1", "--jobs", "2000",
         "--db-suffix", f"_t{uuid.uuid4().hex[:8]}"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = done.stdout + done.stderr
    # Each run counts its jobs completed once and journaled once, or fails.
    assert done.returncode == 0, out
    rows = {
        m.group(1): (m.group(2), int(m.group(3)), float(m.group(4)))
        for m in re.finditer(
            r"^(\S+) +[0-9,]+ +\S+ +\d+% +([0-9,]+) +(\d+)% +([0-9.]+)", done.stdout, re.MULTILINE
        )
    }
    assert set(rows) == {v.name for v in VARIANTS}, out
    # No update of today's job row is heap-only: every state change touches an index.
    assert rows["current"][1] == 0, out
    # The prototype's claim is: half of all updates (the claims; completions leave the ready
    # set, so they cannot be), once a page has room for both versions of its rows.
    assert rows["hot-claim-40"][1] >= 45, out
    assert "batched floor" in done.stdout, out
    # The server's CPU per job counts the pgbench backends, which have exited by the time
    # it is read: none is free.
    assert all(row[2] > 0 for row in rows.values()), out
    floor_cpu = re.search(r"server ([0-9.]+) µs/job", done.stdout)
    assert floor_cpu is not None and float(floor_cpu.group(1)) > 0, out


def test_an_unknown_variant_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.levers", "--only", "no-such-lever"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "no variant no-such-lever" in done.stderr


def test_payload_bytes_grow_every_fills_payload_and_a_fill_it_does_not_know_is_refused() -> None:
    from bench import _split_schema
    from bench._measurement import RunFailed
    from bench._pgbench_statements import FILL
    from bench.levers import padded

    for fill in ([FILL % 3], _split_schema.fill(3)):
        assert padded(fill, 0) == fill
        grown = padded(fill, 700)
        assert len(grown) == len(fill) and "repeat('x', 700)" in "".join(grown)
    with pytest.raises(RunFailed, match="--payload-bytes"):
        padded(["INSERT INTO t SELECT 1"], 10)
