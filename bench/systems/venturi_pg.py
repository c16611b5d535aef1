"""venturi on PostgreSQL, driven by the harness (the project's own virtual environment).

The job is the generated ``bench.generated.tasks.Noop``; enqueue goes through ``Queue``
(the synchronous producer a web handler uses), processing through ``Worker.run_until_idle``
at the worker's defaults except ``concurrency``.

    python -m bench.systems.venturi_pg ROLE --url postgresql://... [--jobs N] [--concurrency C]
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import psycopg
from venturi import Queue
from venturi._clock import utcnow
from venturi.storage import ClaimRequest
from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage

from bench import _driver
from bench.generated.tasks import Noop
from bench.systems._venturi_worker import drain

ROLES = ("setup", "recreate", "reset", "fill", "analyze", "verify", "enqueue-single",
         "enqueue-batch", "worker")
SCHEMA = "venturi"


def _sql(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql.replace("{s}", SCHEMA))
        return cur.fetchall() if cur.description else []


def _fill(queue: Queue, jobs: int, batch: int, on: str | None = None) -> None:
    for start in range(0, jobs, batch):
        queue.enqueue_many((Noop(n=n) for n in range(start, min(start + batch, jobs))), queue=on)


def _enqueue(url: str, jobs: int, batch: int, single: bool) -> None:
    with Queue(PostgresStorage(url)) as queue:  # the defaults, as a web app has them
        # Open and warm what each path uses: a single enqueue keeps a connection of its
        # own (parked), a batch takes one from the pool.
        queue.enqueue(Noop(n=-1))
        queue.enqueue_many([Noop(n=-2), Noop(n=-3)])
        _sql(url, "TRUNCATE {s}.job_states, {s}.job_bodies, {s}.journal_entries")
        _driver.ready()
        watch = _driver.Stopwatch()
        if single:
            for n in range(jobs):
                queue.enqueue(Noop(n=n))
        else:
            _fill(queue, jobs, batch)
        fields = watch.fields()
        _driver.report(**fields)


async def _warm_up(storage: AsyncPostgresStorage) -> None:
    """Open the pool, the claim and the completion connections before GO."""
    await storage.pending_counts_by_kind()
    request = ClaimRequest(("default",), ("bench.warmup",), 1, "warmup", timedelta(seconds=1), "w")
    await storage.claim(request, now=utcnow())
    await storage.heartbeat([("none", "none")], lease_duration=timedelta(seconds=1), now=utcnow())


async def _work(url: str, concurrency: int, variant: str) -> None:
    storage = AsyncPostgresStorage(url, pool_size=2)
    try:
        await _warm_up(storage)
        await drain(storage, concurrency, variant)
    finally:
        await storage.close()


def main() -> None:
    args = _driver.arguments(ROLES)
    url = args.url
    if args.role in ("setup", "recreate"):
        if args.role == "recreate":  # a new install: tables never analyzed nor vacuumed
            _sql(url, "DROP SCHEMA IF EXISTS {s} CASCADE")
        with Queue(PostgresStorage(url, pool_size=1)):
            pass  # migrates
        _driver.answer()
    elif args.role == "analyze":  # ANALYZE of the venturi tables, and nothing else
        for (table,) in _sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = '{s}'"):
            _sql(url, f'ANALYZE {{s}}."{table}"')
        _driver.answer()
    elif args.role == "reset":
        _sql(url, "TRUNCATE {s}.job_states, {s}.job_bodies, {s}.journal_entries, {s}.concurrency_holds")
        _driver.answer()
    elif args.role == "fill":
        with Queue(PostgresStorage(url, pool_size=1)) as queue:
            _fill(queue, args.jobs, args.batch, args.queue or None)
        _driver.answer()
    elif args.role == "verify":
        # The drained jobs are the task's own queue's; other_pending counts the backlog
        # beside them (another queue), which a drain must leave as it was.
        ((done, once, journaled, pending, last, other),) = _sql(
            url,
            "SELECT count(*) FILTER (WHERE state = 'completed' AND queue = 'default'), "
            "count(*) FILTER (WHERE state = 'completed' AND run_count = 1 AND queue = 'default'), "
            "(SELECT count(DISTINCT seq) FROM {s}.journal_entries), "
            "count(*) FILTER (WHERE state = 'pending' AND queue = 'default'), "
            "extract(epoch FROM max(finished_at))::float8, "
            "count(*) FILTER (WHERE state = 'pending' AND queue <> 'default') FROM {s}.job_states",
        )
        _driver.answer(
            done=done, done_once=once, journaled=journaled, pending=pending, last_done_at=last,
            other_pending=other,
        )
    elif args.role in ("enqueue-single", "enqueue-batch"):
        _enqueue(url, args.jobs, args.batch, args.role == "enqueue-single")
    else:
        asyncio.run(_work(url, args.concurrency, args.variant))


if __name__ == "__main__":
    main()
