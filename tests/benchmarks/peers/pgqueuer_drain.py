"""pgqueuer on this machine, in the same sitting as venturi's own figures.

Issue 4 sets venturi's PostgreSQL bar as a multiple of pgqueuer 1.6 with asyncpg
("processing at least 3x pgqueuer with one worker process, 2.5x with two;
enqueue one by one 1.2x, batched 2x"). The figures quoted there were taken on
one machine; a session's machine may be faster or slower, so the ratio is only
honest when both are measured on the same box within minutes of each other.
This script measures pgqueuer the way tests/benchmarks/test_postgres_bench.py
measures venturi: 20,000 no-op jobs enqueued in batches of 1,000, VACUUM
ANALYZE and CHECKPOINT, worker processes connected before GO, the clock
stopped at the last completion the database recorded; medians of 3.

pgqueuer is no dependency of venturi: scripts/bench-peers.sh installs it in a
throwaway virtual environment and runs this file there.

    bash scripts/bench-peers.sh
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from datetime import datetime

import asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.models import Job
from pgqueuer.qm import QueueManager
from pgqueuer.queries import Queries
from pgqueuer.types import QueueExecutionMode

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
DATABASE = "venturi_peer_pgqueuer"
URL = f"postgresql://postgres@127.0.0.1:5432/{DATABASE}"
JOBS = 20_000
REPS = 3
BATCHES = (100, 500)  # pgqueuer's batch_size: the one the issue quotes, and a large one


async def _fresh_database() -> None:
    admin = await asyncpg.connect(ADMIN)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {DATABASE}")
    finally:
        await admin.close()
    conn = await asyncpg.connect(URL)
    try:
        await Queries(AsyncpgDriver(conn)).install()
    finally:
        await conn.close()


async def _reset(conn: asyncpg.Connection) -> None:
    await conn.execute("TRUNCATE pgqueuer, pgqueuer_log, pgqueuer_statistics")


async def _settle() -> None:
    conn = await asyncpg.connect(URL)
    try:
        await conn.execute("VACUUM ANALYZE")
        await conn.execute("CHECKPOINT")
    finally:
        await conn.close()


async def _enqueue_batches(queries: Queries, count: int) -> None:
    for _ in range(0, count, 1000):
        await queries.enqueue(["noop"] * 1000, [None] * 1000, [0] * 1000)


async def enqueue_rates() -> tuple[list[float], list[float]]:
    single: list[float] = []
    batched: list[float] = []
    conn = await asyncpg.connect(URL)
    try:
        queries = Queries(AsyncpgDriver(conn))
        for _ in range(REPS):
            await _reset(conn)
            started = time.perf_counter()
            for _ in range(3_000):
                await queries.enqueue("noop", None)
            single.append(3_000 / (time.perf_counter() - started))
            await _reset(conn)
            started = time.perf_counter()
            await _enqueue_batches(queries, JOBS)
            batched.append(JOBS / (time.perf_counter() - started))
    finally:
        await conn.close()
    return single, batched


async def _xact_commit(conn: asyncpg.Connection) -> int:
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    value = await conn.fetchval(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
    )
    return int(value)


async def processing_rate(processes: int, batch: int) -> tuple[float, float]:
    conn = await asyncpg.connect(URL)
    try:
        await _reset(conn)
        await _enqueue_batches(Queries(AsyncpgDriver(conn)), JOBS)
        await _settle()
        before = await _xact_commit(conn)
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "worker", str(batch)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(processes)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        go = time.time()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.wait(timeout=120) == 0
        after = await _xact_commit(conn)
        done = await conn.fetchval("SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'")
        left = await conn.fetchval("SELECT count(*) FROM pgqueuer")
        last: datetime = await conn.fetchval(
            "SELECT max(created) FROM pgqueuer_log WHERE status = 'successful'"
        )
        assert done == JOBS and left == 0, (done, left)
        return JOBS / (last.timestamp() - go), (after - before) / JOBS
    finally:
        await conn.close()


async def _worker(batch: int) -> None:
    conn = await asyncpg.connect(URL)
    qm = QueueManager(Queries(AsyncpgDriver(conn)))

    @qm.entrypoint("noop")
    async def noop(job: Job) -> None:
        return None

    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await qm.run(batch_size=batch, mode=QueueExecutionMode.drain)
    await conn.close()


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}-{max(values):,.0f}]"


async def _main() -> None:
    await _fresh_database()
    single, batched = await enqueue_rates()
    print(f"pgqueuer enqueue one by one: {_median(single)} jobs/s")
    print(f"pgqueuer enqueue batches of 1,000: {_median(batched)} jobs/s")
    for processes in (1, 2):
        for batch in BATCHES:
            rates: list[float] = []
            xacts: list[float] = []
            for _ in range(REPS):
                rate, xact = await processing_rate(processes, batch)
                rates.append(rate)
                xacts.append(xact)
            print(
                f"pgqueuer processing {JOBS:,} no-op jobs, {processes} worker process(es), "
                f"batch {batch}: {_median(rates)} jobs/s; "
                f"{statistics.median(xacts):.4f} transactions/job"
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        asyncio.run(_worker(int(sys.argv[2])))
    else:
        asyncio.run(_main())
