"""Leases and fences: a run that lost its lease can never overwrite the job."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from venturi import CancelOutcome, JobState, JournalEvent, Queue
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Worker

from tests.integration._workers.support import eventually, fast_config, make_worker, state_is, stop
from tests.integration.tasks import Gated, GatedHandler, Patient, PatientHandler, Probe


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "jobs.db"


@pytest.fixture
def queue(db: Path) -> Iterator[Queue]:
    with Queue(str(db)) as q:
        yield q


class StalledHeartbeats(AsyncSqliteStorage):
    """A worker whose heartbeats silently stop reaching the database (a stalled host)."""

    async def heartbeat(
        self, leases: Sequence[tuple[str, str]], *, lease_duration: timedelta, now: Any
    ) -> set[str]:
        return {job_id for job_id, _ in leases}


async def test_stale_run_is_fenced_after_its_lease_was_reclaimed(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Gated()).job_id
    # Worker A: its lease of 0.5 s is never really extended, and its one handler waits
    # on a gate (so A cannot claim the job again itself).
    stalled = StalledHeartbeats(SqliteStorage(str(db)))
    old_probe = Probe()
    config = fast_config(lease_duration=0.5, heartbeat_interval=0.1, concurrency=1, prefetch=0)
    old: Worker[Probe] = Worker(old_probe, stalled, config=config)
    old.register(GatedHandler())
    old_task = asyncio.create_task(old.run())
    await asyncio.wait_for(old_probe.started.wait(), 5)

    # Worker B reclaims the expired lease and completes the job (its gate is open).
    new_probe = Probe()
    new_probe.gate.set()
    new = make_worker(db, [GatedHandler], new_probe)
    new_task = asyncio.create_task(new.run())
    info = await eventually(state_is(queue, job_id, JobState.COMPLETED), what="completion by B")
    await stop(new, new_task)

    # A's run now ends too; its completion carries the old token and must change nothing.
    old_probe.gate.set()
    await eventually(lambda: old.stats.fenced == 1, what="A's result fenced")
    old_stats = await stop(old, old_task)
    await stalled.close()
    assert old_stats.completed == 0
    after = queue.get(job_id)
    assert after == info  # untouched by the stale result
    assert after.run_count == 2
    events = [entry.event for entry in after.journal]
    assert events == [JournalEvent.LEASE_EXPIRED, JournalEvent.COMPLETED]
    assert after.journal[-1].note == "gated run 2"
    assert after.journal[0].error_code == "lease_expired"


async def test_cancel_fences_a_running_job_and_tells_its_handler(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Patient(seconds=30, checkpoint=True)).job_id
    probe = Probe()
    worker = make_worker(db, [PatientHandler], probe, heartbeat_interval=0.05)
    task = asyncio.create_task(worker.run())
    await asyncio.wait_for(probe.started.wait(), 5)

    assert queue.cancel(job_id) is CancelOutcome.FENCED
    # The next heartbeat finds the lease gone: the handler sees is_cancelled() and
    # checkpoints (a pause), which the worker drops instead of writing.
    await eventually(lambda: probe.cancelled_seen == [job_id], what="handler told")
    await eventually(lambda: worker.stats.dropped == 1, what="result dropped")
    stats = await stop(worker, task)
    assert stats.paused == 0 and stats.fenced == 0
    info = queue.get(job_id)
    assert info.state is JobState.CANCELLED
    assert [entry.event for entry in info.journal] == [JournalEvent.CANCELLED]
    assert info.carry.n == 0  # the dropped run's checkpoint was never written


@pytest.mark.slow
async def test_finished_results_wait_out_a_database_locked_past_every_retry(
    db: Path, queue: Queue
) -> None:
    # Another process holds the write lock (frozen while writing, say) far longer than
    # the worker's lock wait times its write attempts: the finished result is kept and
    # written once the lock is free, not given up to be run again after the lease.
    import sqlite3

    job_id = queue.enqueue(Gated()).job_id
    probe = Probe()
    storage = AsyncSqliteStorage(SqliteStorage(str(db), max_lock_wait=timedelta(milliseconds=100)))
    worker: Worker[Probe] = Worker(probe, storage, config=fast_config(lease_duration=30))
    worker.register(GatedHandler())
    task = asyncio.create_task(worker.run())
    try:
        await asyncio.wait_for(probe.started.wait(), 5)
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        probe.gate.set()  # the run ends while nobody but the holder can write
        await asyncio.sleep(6)  # five attempts with back-off take about 3.5 s
        assert queue.get(job_id).state is JobState.RUNNING
        holder.execute("ROLLBACK")
        holder.close()
        info = await eventually(state_is(queue, job_id, JobState.COMPLETED), timeout=10)
    finally:
        stats = await stop(worker, task)
        await storage.close()
    assert (info.run_count, info.journal[-1].note) == (1, "gated run 1")
    assert probe.runs == [(job_id, 1)]
    assert stats.completed == 1
