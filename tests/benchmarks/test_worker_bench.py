"""Worker drain throughput: no-op jobs, one worker process, SQLite at synchronous=FULL.

Prints jobs/s and CPU µs per job; asserts only that every job completed
exactly once (no timing assertions: figures depend on the machine and on
what else runs on it). The bar (DEVELOPING.md, "Performance") is 40,000
jobs/s with claim batch 100. A second figure runs the same worker over
a storage stub that answers instantly, to show the worker's own share.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_worker_bench.py
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from venturi import Queue
from venturi.storage import Capabilities, ClaimedJob, ClaimRequest, JobState, RunResult
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Worker, WorkerConfig

from tests.integration.tasks import Noop, NoopHandler

pytestmark = pytest.mark.benchmark

JOBS = 20_000


def _enqueue(path: Path, count: int) -> None:
    with Queue(SqliteStorage(str(path))) as queue:
        for start in range(0, count, 1000):
            queue.enqueue_many(Noop(n) for n in range(start, min(start + 1000, count)))


def _drain(storage: Any, *, claim_batch: int, concurrency: int) -> tuple[float, float, int]:
    config = WorkerConfig(
        claim_batch=claim_batch, concurrency=concurrency, install_signal_handlers=False
    )
    worker: Worker[None] = Worker(None, storage, config=config)
    worker.register(NoopHandler())
    wall, cpu = time.perf_counter(), time.process_time()
    stats = asyncio.run(worker.run_until_idle())
    return time.perf_counter() - wall, time.process_time() - cpu, stats.completed


def _report(label: str, elapsed: float, cpu: float) -> None:
    print(
        f"\n{label}: {JOBS} no-op jobs in {elapsed:.3f} s = {JOBS / elapsed:,.0f} jobs/s "
        f"({cpu / JOBS * 1e6:.1f} µs CPU per job)"
    )


@pytest.mark.parametrize(("claim_batch", "concurrency"), [(100, 10), (500, 10)])
def test_drain_noop_jobs_on_sqlite(tmp_path: Path, claim_batch: int, concurrency: int) -> None:
    path = tmp_path / "bench.db"
    _enqueue(path, JOBS)
    storage = AsyncSqliteStorage(SqliteStorage(str(path), synchronous="FULL"))
    try:
        elapsed, cpu, completed = _drain(storage, claim_batch=claim_batch, concurrency=concurrency)
    finally:
        storage.sync.close()
    assert completed == JOBS
    with Queue(SqliteStorage(str(path))) as queue:
        (stat,) = queue.storage.stats(now=datetime.now(UTC))
    assert stat.counts == {JobState.COMPLETED: JOBS}
    _report(
        f"worker drain, SQLite FULL, 1 process, claim_batch={claim_batch}, concurrency={concurrency}",
        elapsed,
        cpu,
    )


class InstantStorage:
    """Hands out pre-built jobs and accepts every result: the worker's cost alone."""

    capabilities = Capabilities("stub", False, False, False, False)

    def __init__(self, count: int) -> None:
        self.left = count
        self.finished = 0

    async def migrate(self) -> int:
        return 1

    async def claim(self, request: ClaimRequest, *, now: datetime) -> list[ClaimedJob]:
        n = min(request.limit, self.left)
        self.left -= n
        expires = now + request.lease_duration
        token = request.lease_token
        return [self._job(f"{self.left + i:026d}", token, expires) for i in range(n)]

    @staticmethod
    def _job(job_id: str, token: str, expires: datetime) -> ClaimedJob:
        return ClaimedJob(
            id=job_id,
            kind=Noop.KIND,
            queue="default",
            priority=2,
            payload='{"n":1}',
            carry="{}",
            run_count=1,
            failure_count=0,
            lease_token=token,
            lease_expires_at=expires,
            concurrency_key=None,
            journal=(),
        )

    async def finish(self, results: Sequence[RunResult], *, now: datetime) -> list[bool]:
        self.finished += len(results)
        return [True] * len(results)

    async def heartbeat(self, leases: Sequence[tuple[str, str]], **_: Any) -> set[str]:
        return {job_id for job_id, _ in leases}

    async def reclaim_expired(self, **_: Any) -> int:
        return 0

    async def prune(self, **_: Any) -> int:
        return 0

    async def pending_counts_by_kind(self) -> dict[str, int]:
        return {}

    async def close(self) -> None:
        pass


def test_worker_overhead_without_storage() -> None:
    storage = InstantStorage(JOBS)
    elapsed, cpu, completed = _drain(storage, claim_batch=100, concurrency=10)
    assert completed == JOBS == storage.finished
    _report("worker alone (instant storage stub), claim_batch=100", elapsed, cpu)
