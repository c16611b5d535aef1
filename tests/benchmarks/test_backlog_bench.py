"""``venturi check-backlog`` over 1,000,000 pending jobs on PostgreSQL: rate and peak memory.

The backlog is stored by version 1 of a task (``backlog/v1.py``); the check
runs the ``venturi`` command in a process of its own with version 2
(``backlog/v2.py``: the old kind kept as an alias, a field dropped by an
upgrade), so every job is read, decoded, upgraded and counted: the worst case
of a real check. The same check over 100,000 jobs gives the memory baseline:
memory must not grow with the backlog (batches are bounded). Target on the
development machine: the whole scan of 1,000,000 jobs in under 60 s.
Prints figures; asserts only what the check found.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_backlog_bench.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from venturi import Queue

from tests.benchmarks.backlog.v1 import Notify
from tests.pg_fixtures import ADMIN_URL

pytestmark = [pytest.mark.benchmark, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
BATCH = 10_000

#: Runs the command in-process and reports the peak resident memory of that process.
_MEASURED = """
import resource, sys
from venturi.cli import main
code = main(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def _fill(url: str, total: int, already: int) -> None:
    with Queue(url) as queue:
        for start in range(already, total, BATCH):
            queue.enqueue_many(
                Notify(user_id=n, email=f"user{n}@example.com", tags=("a", "b"))
                for n in range(start, min(total, start + BATCH))
            )


def _check(url: str) -> tuple[dict[str, Any], float, int]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, "check-backlog", "--json", "--database", url,
         "tests.benchmarks.backlog.v2"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout), seconds, peak_kib


def test_check_backlog_of_a_million_pending_jobs(pg_url: str) -> None:
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"\ncheck-backlog on PostgreSQL (load average {load}; a busy machine moves these figures)")
    stored = 0
    for total in (100_000, 1_000_000):
        started = time.perf_counter()
        _fill(pg_url, total, stored)
        print(f"  stored {total - stored:,} jobs in {time.perf_counter() - started:.1f} s")
        stored = total
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            schema = pg_url.rsplit("venturi_schema=", 1)[1]
            conn.execute(f'VACUUM ANALYZE "{schema}".job_states, "{schema}".job_bodies')
        report, seconds, peak_kib = _check(pg_url)
        assert report["checked"] == total and report["failed"] == 0
        [kind] = report["kinds"]
        assert kind["upgraded"] == total and kind["alias_of"] == "bench.notify_user"
        print(
            f"  {total:>9,} jobs: {seconds:5.1f} s wall ({report['seconds']:.1f} s scan), "
            f"{total / seconds:,.0f} jobs/s, peak memory {peak_kib / 1024:.0f} MiB"
        )
