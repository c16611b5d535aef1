"""Worker processes on PostgreSQL: no job runs in two places at once, every job completes,
and killed connections are made again without losing anything.

Workers are real processes (``_workers/pg_worker.py``) running ``Marked`` jobs,
which log each run's start and end (with pid and time) to one append-only file.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg
import pytest
from venturi import Queue
from venturi.storage.postgres import PostgresStorage

from tests.integration._workers.pg_tasks import Marked
from tests.pg_fixtures import ADMIN_URL
from tests.pg_server import OwnServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _spawn(url: str, log: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration._workers.pg_worker", url,
         "--handler", "marked", "--log", str(log), *extra],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


def _go(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()


def _stop(procs: list[subprocess.Popen[str]], *, terminate: bool = False) -> None:
    for proc in procs:
        if terminate and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()


def _runs(log: Path) -> dict[str, list[dict[str, Any]]]:
    """Per job, its runs in start order: run number, pid, start, end, lock."""
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    for line in log.read_text().splitlines():
        event, job_id, run, pid, at, lock = line.split()
        entry = runs.setdefault((job_id, int(run)), {"run": int(run), "lock": lock})
        entry[event] = float(at)
        entry[f"{event}_pid"] = int(pid)
    by_job: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (job_id, _), entry in sorted(runs.items(), key=lambda kv: kv[1]["start"]):
        by_job[job_id].append(entry)
    return by_job


def _states(schema: str, admin_url: str = ADMIN_URL) -> dict[str, int]:
    with psycopg.connect(admin_url) as conn:
        rows = conn.execute(
            f'SELECT state, count(*) FROM "{schema}".job_states GROUP BY state'
        ).fetchall()
    return dict(rows)


def test_two_worker_processes_never_run_one_job_at_once(
    pg_url: str, pg_schema: str, tmp_path: Path
) -> None:
    jobs = 3_000  # about half a second of sleeps for each process: both surely take part
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        queue.enqueue_many(
            Marked(n, sleep_ms=2.0 + n % 3, lock=f"lock-{n % 5}" if n % 4 == 0 else "")
            for n in range(jobs)
        )
    log = tmp_path / "runs.log"
    procs = [_spawn(pg_url, log, "--claim-batch", "50", "--concurrency", "20") for _ in range(2)]
    _go(procs)
    _stop(procs)
    runs = _runs(log)
    assert len(runs) == jobs
    assert all(len(r) == 1 and "end" in r[0] for r in runs.values()), "a job ran twice"
    assert len({r[0]["start_pid"] for r in runs.values()}) == 2, "one process did all the work"
    # Jobs sharing a concurrency key never overlapped, whichever process ran them.
    by_lock: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for [entry] in runs.values():
        if entry["lock"] != "-":
            by_lock[entry["lock"]].append((entry["start"], entry["end"]))
    for lock, spans in by_lock.items():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start >= end, f"two jobs with concurrency key {lock} overlapped"
    assert _states(pg_schema) == {"completed": jobs}


def test_killed_connections_are_made_again_and_nothing_is_lost(
    own_postgres: OwnServer, own_pg_url: str, own_pg_schema: str, tmp_path: Path
) -> None:
    # Every venturi backend on the server is terminated, so the server is this run's own.
    pg_url, pg_schema, admin = own_pg_url, own_pg_schema, own_postgres.admin_url
    jobs = 3_000
    lease = 3.0
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        queue.enqueue_many(Marked(n, sleep_ms=5.0) for n in range(jobs))
    log = tmp_path / "runs.log"
    procs = [_spawn(pg_url, log, "--forever", "--lease", str(lease), "--poll", "0.2")]
    _go(procs)
    killed = 0
    done_at_kills = []
    deadline = time.monotonic() + 90
    try:
        for _ in range(3):
            time.sleep(0.3)
            killed += own_postgres.terminate()
            done_at_kills.append(_states(pg_schema, admin).get("completed", 0))
        while _states(pg_schema, admin).get("completed", 0) < jobs:
            assert time.monotonic() < deadline, f"jobs left: {_states(pg_schema, admin)}"
            time.sleep(0.2)
    finally:
        _stop(procs, terminate=True)
    assert killed >= 3
    assert done_at_kills[-1] < jobs, "the connections were killed after the work was done"
    runs = _runs(log)
    assert len(runs) == jobs
    for job_runs in runs.values():
        # A second run only once the first lease ran out (its claim's reply was lost).
        for first, second in itertools.pairwise(job_runs):
            assert second["start"] >= first["start"] + lease * 0.9
    assert _states(pg_schema, admin) == {"completed": jobs}
    assert os.path.getsize(log) > 0
