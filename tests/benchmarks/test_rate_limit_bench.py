"""What a rate limit costs the claim: the drain of a task whose limit no drain can reach
(10,000,000 per second) against the same task without one, on SQLite and PostgreSQL.

One worker process, 20,000 no-op jobs (``RATE_BENCH_JOBS``), the runs interleaved (without, with, three
times); prints each rate and the medians. Asserts only that every job completed.
A limited job is claimed only to start at once (at most the free consumers of a claim,
``concurrency``), so the limited drain claims in smaller batches: the figures are
given at concurrency 10 (the default) and 100.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_rate_limit_bench.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

import psycopg
import pytest
from venturi import Queue, RateLimit, Task, codec
from venturi.storage import AsyncStorage
from venturi.storage.postgres import AsyncPostgresStorage
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig

from tests.pg_fixtures import ADMIN_URL

pytestmark = pytest.mark.benchmark

JOBS = int(os.environ.get("RATE_BENCH_JOBS", "20000"))
REPS = 3


@dataclass(frozen=True, slots=True)
class Free(Task[Any]):
    KIND: ClassVar[str] = "bench_free"
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


@dataclass(frozen=True, slots=True)
class Unreachable(Free):
    """The same task with a limit no drain reaches."""

    KIND: ClassVar[str] = "bench_unreachable"
    RATE_LIMIT: ClassVar[RateLimit | None] = RateLimit(max=10_000_000, per=timedelta(seconds=1))


class FreeHandler(Handler[Free, Any, None]):
    TASK = Free

    async def handle(self, task: Free, ctx: Context[Any], state: None) -> Outcome[None]:
        return Outcome.completed()


class UnreachableHandler(Handler[Unreachable, Any, None]):
    TASK = Unreachable

    async def handle(self, task: Unreachable, ctx: Context[Any], state: None) -> Outcome[None]:
        return Outcome.completed()


def _drain(storage: AsyncStorage, limited: bool, concurrency: int) -> float:
    config = WorkerConfig(concurrency=concurrency, install_signal_handlers=False)
    worker: Worker[None] = Worker(None, storage, config=config)
    worker.register(UnreachableHandler() if limited else FreeHandler())


    async def run() -> int:
        try:
            return (await worker.run_until_idle()).completed
        finally:
            await storage.close()  # the worker closes only the storages it opened

    wall = time.perf_counter()
    completed = asyncio.run(run())
    elapsed = time.perf_counter() - wall
    assert completed == JOBS
    return JOBS / elapsed


def _compare(label: str, enqueue: Any, storage: Any, concurrency: int) -> None:
    rates: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(REPS):
        for limited in (False, True):
            task = Unreachable if limited else Free
            enqueue([task(n=n) for n in range(JOBS)])
            rates[limited].append(_drain(storage(), limited, concurrency))
            print(f"  {label}, limited={limited}: {rates[limited][-1]:,.0f} jobs/s", flush=True)
    free, capped = statistics.median(rates[False]), statistics.median(rates[True])
    print(
        f"\n{label}, concurrency {concurrency}: without a limit "
        f"{', '.join(f'{r:,.0f}' for r in rates[False])} jobs/s (median {free:,.0f}); "
        f"limit 10,000,000/s {', '.join(f'{r:,.0f}' for r in rates[True])} "
        f"(median {capped:,.0f}, {capped / free:.0%})"
    )


@pytest.mark.parametrize("concurrency", [10, 100])
def test_sqlite_drain_with_an_unreachable_limit(tmp_path: Path, concurrency: int) -> None:
    path = tmp_path / "bench.db"

    def enqueue(tasks: list[Task[Any]]) -> None:
        with Queue(SqliteStorage(str(path))) as queue:
            for start in range(0, len(tasks), 1000):
                queue.enqueue_many(tasks[start : start + 1000])

    _compare("SQLite FULL", enqueue, lambda: AsyncSqliteStorage(SqliteStorage(str(path), synchronous="FULL")), concurrency)


@pytest.mark.postgres
@pytest.mark.parametrize("concurrency", [10, 100])
def test_postgres_drain_with_an_unreachable_limit(pg_url: str, pg_schema: str, concurrency: int) -> None:
    def enqueue(tasks: list[Task[Any]]) -> None:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            s = f'"{pg_schema}"'
            conn.execute(f"TRUNCATE {s}.job_states, {s}.job_bodies, {s}.journal_entries")
            conn.execute(f"VACUUM ANALYZE {s}.job_states, {s}.job_bodies")
        with Queue(pg_url) as queue:
            for start in range(0, len(tasks), 1000):
                queue.enqueue_many(tasks[start : start + 1000])

    with Queue(pg_url):
        pass  # migrated
    _compare("PostgreSQL", enqueue, lambda: AsyncPostgresStorage(pg_url), concurrency)
