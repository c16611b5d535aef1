"""Periodic tasks across processes: three worker processes on SQLite, and three on
PostgreSQL, run a schedule of every second for 20 s. Every slot gets exactly one job, and
no slot between the first and the last is missed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from venturi import JobState, Queue
from venturi.storage import JobFilter

from tests.integration._workers.scheduled_worker import EverySecond

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 20.0
PROCESSES = 3


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


def test_three_workers_enqueue_every_slot_exactly_once(database: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration._workers.scheduled_worker", database,
             "--seconds", str(SECONDS)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        for _ in range(PROCESSES)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=SECONDS + 60)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert [proc.returncode for proc in procs] == [0] * PROCESSES
    enqueued = [json.loads(out.split("exited", 1)[1])["enqueued"] for out in outputs]

    with Queue(database) as queue:
        jobs = queue.storage.list_jobs(JobFilter(kinds=(EverySecond.KIND,), limit=1000))
        [schedule] = queue.storage.schedules()
    slots = sorted(job.run_at for job in jobs)
    assert len(slots) == len(set(slots)), "a slot got two jobs"
    assert sum(enqueued) == len(slots)  # each job was enqueued by exactly one process
    assert len(slots) >= SECONDS - 2  # the whole 20 s, give or take the start and the drain
    gaps = {b - a for a, b in pairwise(slots)}
    assert gaps == {timedelta(seconds=1)}, f"missed slots: gaps {sorted(gaps)}"
    assert all(job.state in (JobState.COMPLETED, JobState.PENDING) for job in jobs)
    assert schedule.last_slot_at == slots[-1] and schedule.name == EverySecond.KIND
    print(f"\n{len(slots)} slots, enqueued per process: {enqueued}")
