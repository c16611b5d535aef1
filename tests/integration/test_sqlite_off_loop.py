"""SQLite work waits off the event loop: a lock held by another connection stalls the
caller, never the loop (the figures: ``tests/benchmarks/test_loop_lag_bench.py``)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

from venturi import AsyncQueue, EnqueueOutcome, JobState
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

from tests.conformance.tasks import Plain

HELD_S = 1.0


def _hold_write_lock(path: Path, locked: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        locked.set()
        time.sleep(HELD_S)
        conn.execute("COMMIT")
    finally:
        conn.close()


async def _gaps_while(awaitable: asyncio.Future[object] | asyncio.Task[object]) -> list[float]:
    """The gaps between 5 ms ticks of the loop until ``awaitable`` is done."""
    loop = asyncio.get_running_loop()
    gaps: list[float] = []
    last = loop.time()
    while not awaitable.done():
        await asyncio.sleep(0.005)
        now = loop.time()
        gaps.append(now - last)
        last = now
    return gaps


async def test_an_enqueue_waiting_for_the_lock_leaves_the_loop_running(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    async with AsyncQueue(f"sqlite:///{path}") as queue:
        locked = threading.Event()
        holder = threading.Thread(target=_hold_write_lock, args=(path, locked))
        holder.start()
        assert await asyncio.to_thread(locked.wait, 5)
        started = time.monotonic()
        enqueue = asyncio.ensure_future(queue.enqueue(Plain(1)))
        gaps = await _gaps_while(enqueue)
        waited = time.monotonic() - started
        holder.join()
        result = enqueue.result()
        assert result.outcome is EnqueueOutcome.INSERTED
        assert (await queue.get(result.job_id)).state is JobState.PENDING
    # It waited for the lock, and the loop went on ticking all along.
    assert waited >= HELD_S * 0.8
    assert len(gaps) >= 20 and max(gaps) < 0.5, max(gaps)


async def test_worker_calls_and_reads_run_on_the_storage_thread(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    storage = AsyncSqliteStorage(SqliteStorage(str(path)))
    await storage.open()
    await storage.migrate()
    threads: list[str] = []
    original = storage.sync.schema_version

    def spy() -> int:
        threads.append(threading.current_thread().name)
        return original()

    storage.sync.schema_version = spy  # type: ignore[method-assign]
    assert await storage.schema_version() >= 1
    await storage.close()
    assert threads and threads[0].startswith("venturi-sqlite:")
    assert threads[0] != threading.current_thread().name
