"""The cost of a merge and of a run as a job's history grows: flat, or not.

A job that is merged into again and again, or paused again and again, gathers a
long journal. A merge's ``Pending`` and a run's ``Context`` see only the most
recent ``venturi.HISTORY_WINDOW`` entries (with the total count from the job row),
so neither should cost more at 1,000 entries than at none. Prints, per backend and
history length: the p50 / p99 of one Keep merge (an enqueue meeting the job), and
the p50 / p99 of one run's storage work (claim of the job plus the finish that
pauses it, the journal window read with the claim). Commits are not waited for
(SQLite ``synchronous="NORMAL"``, PostgreSQL ``synchronous_commit=off``): a durable
commit on a busy disk costs several milliseconds and varies more than what is
measured here, the work a history adds. No timed assertions.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_history_bench.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest
from venturi import AsyncQueue
from venturi._enqueue import utcnow
from venturi.storage import Resolution
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

from tests.conformance.helpers import claim_request, result
from tests.conformance.tasks import Digest

pytestmark = pytest.mark.benchmark

LENGTHS = (0, 100, 1_000)
SAMPLES = 400


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1e3:6.2f} ms, p99 {p99 * 1e3:6.2f} ms"


async def _merges(queue: AsyncQueue, history: int) -> list[float]:
    """Keep merges into a job that already has ``history`` journal entries."""
    group = f"merge-{history}"
    await queue.enqueue(Digest(group), queue="merges")
    for _ in range(history):
        await queue.enqueue(Digest(group, policy="keep"))
    samples = []
    for _ in range(SAMPLES):
        started = time.perf_counter()
        await queue.enqueue(Digest(group, policy="keep"))
        samples.append(time.perf_counter() - started)
    return samples


async def _runs(queue: AsyncQueue, history: int) -> list[float]:
    """Claim + pause cycles of a job already paused ``history`` times (the only job of
    its queue)."""
    storage = queue.storage
    name = f"runs-{history}"
    await queue.enqueue(Digest(name), queue=name)
    samples = []
    for n in range(history + SAMPLES):
        started = time.perf_counter()
        [job] = await storage.claim(claim_request(queues=(name,), limit=1), now=utcnow())
        now = utcnow()
        paused = result(job, Resolution.PAUSED, now=now, run_at=now)
        assert await storage.finish([paused], now=now) == [True]
        if n >= history:
            samples.append(time.perf_counter() - started)
    return samples


async def _report(name: str, queue: AsyncQueue) -> None:
    for history in LENGTHS:
        merges = await _merges(queue, history)
        runs = await _runs(queue, history)
        print(f"\n{name:8} history {history:5,}: merge {_ms(merges)}; run {_ms(runs)}")


async def test_history_cost_sqlite(tmp_path: Path) -> None:
    storage = AsyncSqliteStorage(SqliteStorage(str(tmp_path / "history.db"), synchronous="NORMAL"))
    async with AsyncQueue(storage) as queue:
        await _report("sqlite", queue)


@pytest.mark.postgres
async def test_history_cost_postgres(pg_url: str) -> None:
    async with AsyncQueue(f"{pg_url}&options=-csynchronous_commit%3Doff") as queue:
        await _report("postgres", queue)
