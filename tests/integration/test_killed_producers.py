"""A producer killed with SIGKILL in the middle of a large enqueue_many leaves whole
batches only: every batch is in the database with all its 1,000 jobs, or not at all.

On SQLite the batch is one write transaction (and the file must stay sound: the
integrity check); on PostgreSQL it goes as pipelined chunks in one transaction,
which the server rolls back when the connection dies.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from venturi import Queue
from venturi.storage import JobFilter

from tests.integration._workers.batch_producer import BATCH
from tests.pg_fixtures import skip_reason

ROOT = Path(__file__).resolve().parents[2]


def _kill_mid_batch(url: str, *, batch: int, delay_s: float) -> int:
    """Run the producer until it starts batch ``batch``, kill it ``delay_s`` later;
    returns how many batches it reported committed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.integration._workers.batch_producer", url],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    reported = 0
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        while (line := proc.stdout.readline().strip()) != f"start {batch}":
            reported += line.startswith("done ")
        time.sleep(delay_s)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        reported += sum(1 for line in proc.stdout if line.startswith("done "))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return reported


def _batches(url: str) -> Counter[int]:
    with Queue(url, migrate=False) as queue:
        jobs = queue.storage.list_jobs(JobFilter(limit=1_000_000))
    import json

    return Counter(json.loads(job.payload)["n"] // BATCH for job in jobs)


def _check(url: str, reported: int) -> None:
    batches = _batches(url)
    assert set(batches.values()) <= {BATCH}, f"a batch was cut: {batches}"
    # Every reported batch is there; at most one more committed before the kill.
    assert sorted(batches) == list(range(len(batches)))
    assert reported <= len(batches) <= reported + 1


#: How long after a batch starts the producer is killed: while its tasks are built,
#: while (on PostgreSQL) its first chunks are sent, and near its commit.
DELAYS_S = [0.0005, 0.001, 0.002, 0.003, 0.004]


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", DELAYS_S)
def test_sqlite_producer_killed_mid_batch(tmp_path: Path, delay_s: float) -> None:
    path = tmp_path / "jobs.db"
    url = f"sqlite:///{path}"
    Queue(url).close()
    reported = _kill_mid_batch(url, batch=3, delay_s=delay_s)
    _check(url, reported)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("delay_s", DELAYS_S)
def test_postgres_producer_killed_mid_batch(pg_url: str, delay_s: float) -> None:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    Queue(pg_url).close()
    reported = _kill_mid_batch(pg_url, batch=3, delay_s=delay_s)
    _check(pg_url, reported)
