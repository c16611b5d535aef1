"""PostgreSQL figures: enqueue rates, dedup latency, and worker processing rates.

Prints figures, asserts only correctness (every job completed exactly once);
no timed assertions. Issue 4 states its bar as multiples of pgqueuer 1.6 with
asyncpg on the same machine (processing 3x with one worker process and 2.5x
with two; enqueue 1.2x one by one and 2x in batches of 1,000), quoting
figures from one machine (38,400 and 50,000 jobs/s; 2,760 and 118,000 jobs/s).
Machines differ, so the side-by-side benchmark (bench/, docs/benchmarks.md)
measures the peers and venturi in one sitting: its ratios are the ones to quote.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_postgres_bench.py
    bash bench/run.sh --only pg
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from venturi import Queue
from venturi.storage.postgres import PostgresStorage

from tests.integration._workers.pg_tasks import Keyed
from tests.integration.tasks import Noop
from tests.pg_fixtures import ADMIN_URL

pytestmark = [pytest.mark.benchmark, pytest.mark.postgres]

JOBS = 20_000
REPS = 3
ROOT = Path(__file__).resolve().parents[2]


def _admin(schema: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        cur = conn.execute(sql.replace("{s}", f'"{schema}"'), params)
        return cur.fetchall() if cur.description else []


def _reset(schema: str) -> None:
    _admin(schema, "TRUNCATE {s}.job_states, {s}.job_bodies, {s}.journal_entries, {s}.concurrency_holds")


def _settle(schema: str) -> None:
    _admin(schema, "VACUUM ANALYZE {s}.job_states, {s}.job_bodies, {s}.journal_entries")
    _admin(schema, "CHECKPOINT")


def _xact_commit() -> int:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}-{max(values):,.0f}]"


def _machine() -> str:
    """The state of the box, since other work on it moves every figure here."""
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE fsync_probe (x int)")
        started = time.perf_counter()
        for _ in range(200):
            conn.execute("SELECT 1")
        select_us = (time.perf_counter() - started) / 200 * 1e6
        conn.execute("CREATE TABLE IF NOT EXISTS public.venturi_bench_commit (x int)")
        started = time.perf_counter()
        for _ in range(200):
            conn.execute("INSERT INTO public.venturi_bench_commit VALUES (1)")
        commit_us = (time.perf_counter() - started) / 200 * 1e6
        conn.execute("DROP TABLE public.venturi_bench_commit")
    return (
        f"[machine: load average {load}, SELECT 1 round trip {select_us:.0f} µs, "
        f"durable one-row INSERT {commit_us:.0f} µs]"
    )


# -- enqueue --------------------------------------------------------------------------


def test_enqueue_rates(pg_url: str, pg_schema: str) -> None:
    single: list[float] = []
    batched: list[float] = []
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        for _ in range(REPS):
            _reset(pg_schema)
            count = 3_000
            started = time.perf_counter()
            for n in range(count):
                queue.enqueue(Noop(n))
            single.append(count / (time.perf_counter() - started))
            _reset(pg_schema)
            started = time.perf_counter()
            for start in range(0, JOBS, 1000):
                queue.enqueue_many(Noop(n) for n in range(start, start + 1000))
            batched.append(JOBS / (time.perf_counter() - started))
    print(f"\n{_machine()}")
    print(f"enqueue one by one (Queue.enqueue, sync): {_median(single)} jobs/s  (bar 2,760)")
    print(
        f"enqueue batches of 1,000 (Queue.enqueue_many): {_median(batched)} jobs/s  (bar 118,000)"
    )


# -- dedup latency ---------------------------------------------------------------------


def _dedup_latencies(queue: Queue, prefix: str, count: int) -> tuple[list[float], list[float]]:
    """Latency of a new key (insert) and of the same key again (merge: Keep), in µs."""
    fresh: list[float] = []
    again: list[float] = []
    for n in range(count):
        task = Keyed(f"{prefix}-{n}", n)
        started = time.perf_counter()
        queue.enqueue(task)
        fresh.append((time.perf_counter() - started) * 1e6)
        started = time.perf_counter()
        queue.enqueue(task)
        again.append((time.perf_counter() - started) * 1e6)
    return fresh, again


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_dedup_latency(pg_url: str, pg_schema: str) -> None:
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        for pending in (0, 1_000_000):
            _reset(pg_schema)
            if pending:
                _admin(
                    pg_schema,
                    "WITH b AS (INSERT INTO {s}.job_bodies (id, payload) SELECT "
                    "lpad(g::text, 26, '0'), '{\"key\":\"bulk\",\"n\":0}' "
                    "FROM generate_series(1, %s) AS g RETURNING seq, id) "
                    "INSERT INTO {s}.job_states (seq, kind, queue, priority, state, carry, "
                    "dedup_key, run_at) SELECT b.seq, 'pg_keyed', 'default', 2, 'pending', '{}', "
                    "'bulk-' || ltrim(b.id, '0'), now() FROM b",
                    (pending,),
                )
            _settle(pg_schema)
            _dedup_latencies(queue, "warm", 200)
            fresh, again = _dedup_latencies(queue, "measure", 3_000)
            print(
                f"\ndedup enqueue with {pending:,} pending: new key p50 {_pct(fresh, 0.5):,.0f} µs "
                f"p99 {_pct(fresh, 0.99):,.0f} µs; existing key (merge) p50 "
                f"{_pct(again, 0.5):,.0f} µs p99 {_pct(again, 0.99):,.0f} µs"
            )


# -- processing --------------------------------------------------------------------------


def _spawn(url: str, extra: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration._workers.pg_worker", url, *extra],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def run_workers(
    url: str, processes: int, extra: list[str] | None = None
) -> tuple[float, list[dict[str, Any]]]:
    """Start ``processes`` workers, wait until all are ready, GO; return (GO time, reports)."""
    procs = [_spawn(url, extra or []) for _ in range(processes)]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        go = time.time()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            assert proc.stdout is not None
            reports.append(json.loads(proc.stdout.readline()))
            assert proc.wait(timeout=60) == 0
        return go, reports
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()


@pytest.mark.parametrize("claim_batch", [100, 500])
@pytest.mark.parametrize("processes", [1, 2])
def test_processing_rate(pg_url: str, pg_schema: str, processes: int, claim_batch: int) -> None:
    """At the default claim batch (100) and at 500, which suits short jobs: each claim
    and each completion has a fixed cost per statement, which a larger batch shares."""
    rates: list[float] = []
    xacts: list[float] = []
    cpu: list[float] = []
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        for _ in range(REPS):
            _reset(pg_schema)
            for start in range(0, JOBS, 1000):
                queue.enqueue_many(Noop(n) for n in range(start, start + 1000))
            _settle(pg_schema)
            before = _xact_commit()
            go, reports = run_workers(pg_url, processes, ["--claim-batch", str(claim_batch)])
            after = _xact_commit()
            rows = _admin(
                pg_schema,
                "SELECT count(*) FILTER (WHERE state = 'completed' AND run_count = 1), "
                "extract(epoch FROM max(finished_at)), "
                "(SELECT count(DISTINCT seq) FROM {s}.journal_entries) FROM {s}.job_states",
            )
            completed, last, journaled = rows[0]
            assert completed == JOBS and journaled == JOBS
            assert sum(r["completed"] for r in reports) == JOBS
            rates.append(JOBS / (float(last) - go))
            xacts.append((after - before) / JOBS)
            cpu.append(sum(r["cpu_s"] for r in reports) / JOBS * 1e6)
    print(f"\n{_machine()}")
    print(
        f"processing {JOBS:,} no-op jobs, {processes} worker process(es), claim batch "
        f"{claim_batch}: {_median(rates)} jobs/s "
        f"(bar {'38,400' if processes == 1 else '50,000'}); {statistics.median(xacts):.4f} "
        f"transactions/job; worker CPU {statistics.median(cpu):.1f} µs/job"
    )


async def _storage_drain(url: str) -> float:
    """Claim 100 and finish the previous 100 at once, without the Worker: the storage's
    own ceiling for one process, to tell its cost from the runtime's."""
    from datetime import timedelta

    from venturi._enqueue import utcnow
    from venturi._journal import JournalEntry, JournalEvent
    from venturi.storage import ClaimRequest, Resolution, RunResult
    from venturi.storage.postgres import AsyncPostgresStorage

    storage = AsyncPostgresStorage(url, pool_size=1)
    try:
        await storage.pending_counts_by_kind()
        done, flush, n = 0, None, 0
        started = time.perf_counter()
        while True:
            n += 1
            request = ClaimRequest(
                ("default",), (Noop.KIND,), 100, f"t{n}", timedelta(seconds=30), "w"
            )
            jobs = await storage.claim(request, now=utcnow())
            if flush is not None:
                await flush
            if not jobs:
                return done / (time.perf_counter() - started)
            now = utcnow()
            entry = JournalEntry(now, 1, JournalEvent.COMPLETED)
            results = [RunResult(j.id, j.lease_token, Resolution.COMPLETED, entry) for j in jobs]
            flush = asyncio.ensure_future(storage.finish(results, now=now))
            done += len(jobs)
    finally:
        await storage.close()


def test_storage_drain_ceiling(pg_url: str, pg_schema: str) -> None:
    rates: list[float] = []
    with Queue(PostgresStorage(pg_url, pool_size=1)) as queue:
        for _ in range(REPS):
            _reset(pg_schema)
            for start in range(0, JOBS, 1000):
                queue.enqueue_many(Noop(n) for n in range(start, start + 1000))
            _settle(pg_schema)
            rates.append(asyncio.run(_storage_drain(pg_url)))
    print(f"\n{_machine()}")
    print(f"storage alone (claim/finish loop, no Worker, 1 process): {_median(rates)} jobs/s")
