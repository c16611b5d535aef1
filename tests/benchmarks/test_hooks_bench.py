"""What hooks cost the worker: nothing when unused, and what one no-op hook adds per job.

Three worker setups drain the same no-op jobs, taking turns so that the machine's load
falls on each alike: no hooks at all, a ``Hooks()`` that overrides nothing (the worker
keeps no hook set, so it is the first case again), and a hook overriding every method
with a no-op. Once over a storage stub that answers instantly (the worker's own cost,
where a hook's share is visible) and once over SQLite at synchronous=FULL (the drain rate
an application sees). Prints the median rate and CPU per job of each, and the no-op
hook's cost per job; asserts only that every job completed.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_hooks_bench.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from venturi import EnqueueResult, Hooks, QueueStats
from venturi._hooks import EnqueueEvent, RunEvent
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Worker, WorkerConfig

from tests.benchmarks.test_worker_bench import JOBS, InstantStorage, _enqueue
from tests.integration.tasks import NoopHandler

pytestmark = pytest.mark.benchmark

ROUNDS = 5


class NoopHooks(Hooks):
    """Every method overridden, doing nothing: the cost of being called."""

    def enqueue_started(self, enqueue: EnqueueEvent) -> None:
        pass

    def enqueued(self, enqueue: EnqueueEvent) -> None:
        pass

    def enqueue_failed(self, enqueue: EnqueueEvent, error: BaseException) -> None:
        pass

    def merged(self, enqueue: EnqueueEvent, result: EnqueueResult) -> None:
        pass

    def claimed(self, runs: Sequence[RunEvent]) -> None:
        pass

    def run_started(self, run: RunEvent) -> None:
        return None

    def run_ended(self, run: RunEvent) -> None:
        pass

    def retried(self, run: RunEvent) -> None:
        pass

    def dead(self, run: RunEvent) -> None:
        pass

    def queues_sampled(self, queues: Sequence[QueueStats]) -> None:
        pass


class SampledStub(InstantStorage):
    async def queue_stats(self, *, now: datetime) -> list[QueueStats]:
        return []


SETUPS: dict[str, list[Hooks]] = {"no hooks": [], "Hooks() (nothing overridden)": [Hooks()], "one no-op hook": [NoopHooks()]}


def _drain(storage: Any, hooks: list[Hooks]) -> tuple[float, float, int]:
    config = WorkerConfig(claim_batch=100, concurrency=10, install_signal_handlers=False)
    worker: Worker[None] = Worker(None, storage, config=config, hooks=hooks)
    worker.register(NoopHandler())
    wall, cpu = time.perf_counter(), time.process_time()
    stats = asyncio.run(worker.run_until_idle())
    return time.perf_counter() - wall, time.process_time() - cpu, stats.completed


def _report(where: str, runs: dict[str, list[tuple[float, float]]]) -> None:
    medians = {
        name: (statistics.median(JOBS / wall for wall, _ in samples), statistics.median(cpu for _, cpu in samples))
        for name, samples in runs.items()
    }
    print(f"\n{where}: {JOBS} no-op jobs, median of {ROUNDS} rounds taken in turn (busy machine)")
    for name, (rate, cpu) in medians.items():
        spread = [JOBS / wall for wall, _ in runs[name]]
        print(
            f"  {name:<30} {rate:>9,.0f} jobs/s [{min(spread):,.0f}-{max(spread):,.0f}]  "
            f"{cpu / JOBS * 1e6:5.2f} µs CPU/job"
        )
    base = medians["no hooks"][1]
    hooked = medians["one no-op hook"][1]
    print(f"  a no-op hook costs {(hooked - base) / JOBS * 1e6:+.2f} µs of CPU per job")


def test_hook_cost_over_an_instant_storage() -> None:
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in SETUPS}
    for _ in range(ROUNDS):
        for name, hooks in SETUPS.items():
            storage = SampledStub(JOBS)
            wall, cpu, completed = _drain(storage, hooks)
            assert completed == JOBS == storage.finished
            runs[name].append((wall, cpu))
    _report("worker alone (instant storage stub)", runs)


def test_drain_rate_on_sqlite_with_and_without_hooks(tmp_path: Path) -> None:
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in SETUPS}
    for round_ in range(ROUNDS):
        for index, (name, hooks) in enumerate(SETUPS.items()):
            path = tmp_path / f"bench-{round_}-{index}.db"
            _enqueue(path, JOBS)
            storage = AsyncSqliteStorage(SqliteStorage(str(path), synchronous="FULL"))
            try:
                wall, cpu, completed = _drain(storage, hooks)
            finally:
                asyncio.run(storage.close())
            assert completed == JOBS
            runs[name].append((wall, cpu))
    _report("worker drain, SQLite FULL, 1 process, claim_batch=100", runs)
