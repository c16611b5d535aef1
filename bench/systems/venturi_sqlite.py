"""venturi on SQLite at synchronous=FULL, driven by the harness.

Enqueue through ``Queue``; processing through ``Worker.run_until_idle`` at the worker's
defaults except ``concurrency``, on the async storage (its own thread).

    python -m bench.systems.venturi_sqlite ROLE --url FILE [--jobs N] [--concurrency C]
"""

from __future__ import annotations

import asyncio
import os
import sqlite3

from venturi import Queue
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

from bench import _driver
from bench.generated.tasks import Noop
from bench.systems._venturi_worker import drain

ROLES = ("setup", "reset", "fill", "verify", "enqueue-single", "enqueue-batch", "worker")


def _fill(queue: Queue, jobs: int, batch: int) -> None:
    for start in range(0, jobs, batch):
        queue.enqueue_many(Noop(n=n) for n in range(start, min(start + batch, jobs)))


def _enqueue(path: str, jobs: int, batch: int, single: bool) -> None:
    with Queue(SqliteStorage(path, synchronous="FULL")) as queue:
        queue.enqueue(Noop(n=-1))  # open and warm
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM jobs")
        _driver.ready()
        watch = _driver.Stopwatch()
        if single:
            for n in range(jobs):
                queue.enqueue(Noop(n=n))
        else:
            _fill(queue, jobs, batch)
        fields = watch.fields()
        _driver.report(**fields)


async def _work(path: str, concurrency: int, variant: str) -> None:
    storage = AsyncSqliteStorage(SqliteStorage(path, synchronous="FULL"))
    try:
        await storage.open()
        await drain(storage, concurrency, variant)
    finally:
        await storage.close()


def main() -> None:
    args = _driver.arguments(ROLES)
    path = args.url
    if args.role in ("setup", "reset"):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        with Queue(SqliteStorage(path)):
            pass  # migrates
        _driver.answer()
    elif args.role == "fill":
        with Queue(SqliteStorage(path, synchronous="NORMAL")) as queue:  # untimed
            _fill(queue, args.jobs, args.batch)
        _driver.answer()
    elif args.role == "verify":
        with sqlite3.connect(path) as conn:
            done, once, pending, last = conn.execute(
                "SELECT count(*) FILTER (WHERE state = 'completed'), "
                "count(*) FILTER (WHERE state = 'completed' AND run_count = 1), "
                "count(*) FILTER (WHERE state = 'pending'), max(finished_at) FROM jobs"
            ).fetchone()
            (journaled,) = conn.execute("SELECT count(DISTINCT job_id) FROM journal").fetchone()
        _driver.answer(
            done=done, done_once=once, journaled=journaled, pending=pending, last_done_at=last
        )
    elif args.role in ("enqueue-single", "enqueue-batch"):
        _enqueue(path, args.jobs, args.batch, args.role == "enqueue-single")
    else:
        asyncio.run(_work(path, args.concurrency, args.variant))


if __name__ == "__main__":
    main()
