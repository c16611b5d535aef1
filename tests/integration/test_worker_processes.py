"""Worker processes that die or are stopped: SIGKILL mid-job, and a graceful SIGTERM drain."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from venturi import JobState, JournalEvent, Queue

from tests.integration._workers.support import eventually, make_worker, state_is, stop
from tests.integration.tasks import Patient, Probe, Sleepy, Stubborn, StubbornHandler

ROOT = Path(__file__).resolve().parents[2]


def spawn_worker(db: Path, markers: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration._workers.sqlite_worker", str(db),
         "--markers", str(markers), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


async def wait_for_file(path: Path, process: subprocess.Popen[str], timeout: float = 15) -> None:
    def present() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"worker exited early: {process.communicate()[1][-2000:]}")
        return path.exists()

    await eventually(present, timeout=timeout, what=str(path))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "jobs.db"


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    path = tmp_path / "markers"
    path.mkdir()
    return path


@pytest.fixture
def queue(db: Path) -> Iterator[Queue]:
    with Queue(str(db)) as q:
        yield q


async def test_killed_worker_job_is_reclaimed_and_completed_exactly_once(
    db: Path, markers: Path, queue: Queue
) -> None:
    job_id = queue.enqueue(Stubborn()).job_id
    doomed = spawn_worker(db, markers, "--lease", "1.0", "--heartbeat", "0.2")
    try:
        await wait_for_file(markers / f"started-{job_id}-1", doomed)
        assert queue.get(job_id).state is JobState.RUNNING
        doomed.send_signal(signal.SIGKILL)
        assert doomed.wait(10) == -signal.SIGKILL
    finally:
        if doomed.poll() is None:
            doomed.kill()
        doomed.communicate()
    # The job stays leased to the dead process until the lease runs out; then a
    # second worker returns it to pending and runs it.
    probe = Probe(marker_dir=str(markers))
    worker = make_worker(db, [StubbornHandler], probe, reclaim_interval=0.05)
    task = asyncio.create_task(worker.run())
    info = await eventually(state_is(queue, job_id, JobState.COMPLETED), what="completion")
    stats = await stop(worker, task)
    assert stats.reclaimed == 1 and stats.completed == 1
    assert probe.runs == [(job_id, 2)]
    assert info.run_count == 2 and info.failure_count == 1
    assert [(e.event, e.run) for e in info.journal] == [
        (JournalEvent.LEASE_EXPIRED, 1),
        (JournalEvent.COMPLETED, 2),
    ]
    assert info.journal[0].error_code == "lease_expired"
    assert info.journal[1].note == f"completed by {os.getpid()} on run 2"
    assert not (markers / f"finished-{job_id}-1").exists()
    assert (markers / f"finished-{job_id}-2").exists()


async def test_sigterm_drains_and_hands_leases_back_at_once(
    db: Path, markers: Path, queue: Queue
) -> None:
    cooperative = queue.enqueue(Patient(seconds=60, checkpoint=True)).job_id
    stubborn = queue.enqueue(Patient(seconds=60, checkpoint=False)).job_id
    waiting = [r.job_id for r in queue.enqueue_many([Sleepy(ms=1), Sleepy(ms=1)])]
    # Two handlers at once; the Sleepy jobs are claimed ahead (prefetch) and wait.
    # The lease (30 s) is far longer than the test: only a hand-back can free the jobs.
    process = spawn_worker(
        db, markers, "--concurrency", "2", "--lease", "30", "--heartbeat", "5", "--drain", "0.5"
    )
    try:
        await wait_for_file(markers / f"started-{cooperative}-1", process)
        await wait_for_file(markers / f"started-{stubborn}-1", process)
        await eventually(
            lambda: all(queue.get(j).state is JobState.RUNNING for j in waiting),
            what="prefetched jobs leased",
        )
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=15)
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err[-2000:]
    assert "exited" in out
    assert elapsed < 5  # the drain timeout (0.5 s), not the lease (30 s)

    # The cooperative handler saw the cancel request and checkpointed: its real outcome.
    info = queue.get(cooperative)
    assert info.state is JobState.PENDING and info.failure_count == 0
    assert info.carry.n == 1
    (entry,) = info.journal
    assert entry.event is JournalEvent.PAUSED and entry.note == "checkpointed on cancel"

    # The one that ignored it was cancelled at the drain deadline and handed back.
    info = queue.get(stubborn)
    assert info.state is JobState.PENDING and info.failure_count == 0
    assert [e.event for e in info.journal] == [JournalEvent.RELEASED]
    assert not (markers / f"finished-{stubborn}-1").exists()

    # The prefetched jobs never started: handed back at once, neither a run nor a failure.
    for job_id in waiting:
        info = queue.get(job_id)
        assert (info.state, info.run_count, info.failure_count) == (JobState.PENDING, 0, 0)
        assert [(e.event, e.run) for e in info.journal] == [(JournalEvent.RETURNED, 0)]

    # Pending again immediately: a new worker runs them without waiting for any lease.
    assert queue.get(stubborn).run_at <= queue.get(stubborn).journal[0].at
