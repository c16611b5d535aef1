"""Worker drain throughput: no-op jobs, one worker process, SQLite at synchronous=FULL.

Prints jobs/s; asserts only that every job completed exactly once (no timing
assertions: figures depend on the machine). The bar from
``shared/research/sqlite-probe.md`` is 40,000 jobs/s with claim batch 100.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_worker_bench.py
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from venturi import Queue
from venturi.storage import JobState
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Worker, WorkerConfig

from tests.integration.tasks import Noop, NoopHandler

pytestmark = pytest.mark.benchmark

JOBS = 20_000


def _enqueue(path: Path, count: int) -> None:
    with Queue(SqliteStorage(str(path))) as queue:
        for start in range(0, count, 1000):
            queue.enqueue_many(Noop(n) for n in range(start, min(start + 1000, count)))


def _drain(path: Path, *, claim_batch: int, concurrency: int) -> tuple[float, int]:
    storage = AsyncSqliteStorage(SqliteStorage(str(path), synchronous="FULL"))
    config = WorkerConfig(
        claim_batch=claim_batch, concurrency=concurrency, install_signal_handlers=False
    )
    worker: Worker[None] = Worker(None, storage, config=config)
    worker.register(NoopHandler())

    async def main() -> int:
        stats = await worker.run_until_idle()
        await storage.close()
        return stats.completed

    started = time.perf_counter()
    completed = asyncio.run(main())
    return time.perf_counter() - started, completed


@pytest.mark.parametrize(("claim_batch", "concurrency"), [(100, 10), (500, 10)])
def test_drain_noop_jobs(tmp_path: Path, claim_batch: int, concurrency: int) -> None:
    path = tmp_path / "bench.db"
    _enqueue(path, JOBS)
    elapsed, completed = _drain(path, claim_batch=claim_batch, concurrency=concurrency)
    assert completed == JOBS
    with Queue(SqliteStorage(str(path))) as queue:
        (stat,) = queue.storage.stats(now=datetime.now(UTC))
    assert stat.counts.get(JobState.COMPLETED) == JOBS
    assert set(stat.counts) == {JobState.COMPLETED}
    print(
        f"\nworker drain, SQLite FULL, 1 process, claim_batch={claim_batch}, "
        f"concurrency={concurrency}: {JOBS} no-op jobs in {elapsed:.3f} s = "
        f"{JOBS / elapsed:,.0f} jobs/s"
    )
