"""procrastinate 3.10 on PostgreSQL (psycopg 3), in the benchmark's peers environment.

Each job is a ``noop(n)`` task. ``--concurrency C`` is the worker's ``concurrency``;
processing is ``run_worker_async(wait=False)`` (it stops once the queue is empty) with
procrastinate's other defaults (LISTEN/NOTIFY, jobs kept after they succeed).

    python -m bench.systems.procrastinate_pg ROLE --url postgresql://...
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from procrastinate import App, PsycopgConnector

from bench import _driver

ROLES = ("setup", "reset", "fill", "verify", "enqueue-single", "enqueue-batch", "worker")


def _app(url: str) -> App:
    app = App(connector=PsycopgConnector(conninfo=url))  # its pool at its defaults

    @app.task(name="noop")
    async def noop(n: int) -> None:
        return None

    return app


async def _sql(url: str, sql: str) -> list[Any]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(sql)
        return await cur.fetchall() if cur.description else []


async def _fill(app: App, jobs: int, batch: int) -> None:
    noop = app.tasks["noop"]
    for start in range(0, jobs, batch):
        await noop.batch_defer_async(*({"n": n} for n in range(start, min(start + batch, jobs))))


async def _in_thread(fn: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn)


async def _enqueue(args: Any, single: bool) -> None:
    app = _app(args.url)
    async with app.open_async():
        noop = app.tasks["noop"]
        await noop.defer_async(n=-1)  # the pool's connection, open and warm
        await _sql(args.url, "DELETE FROM procrastinate_jobs")
        await _in_thread(_driver.ready)
        watch = _driver.Stopwatch()
        if single:
            for n in range(args.jobs):
                await noop.defer_async(n=n)
        else:
            await _fill(app, args.jobs, args.batch)
        fields = watch.fields()
        await _in_thread(lambda: _driver.report(**fields))


async def _work(args: Any) -> None:
    app = _app(args.url)
    async with app.open_async():
        await _sql(args.url, "SELECT 1")
        await _in_thread(_driver.ready)
        watch = _driver.Stopwatch()
        await app.run_worker_async(
            concurrency=args.concurrency, wait=False, install_signal_handlers=False
        )
        fields = watch.fields()
        await _in_thread(lambda: _driver.report(**fields))


async def _main() -> None:
    args = _driver.arguments(ROLES)
    url = args.url
    if args.role == "setup":
        app = _app(url)
        async with app.open_async():
            await app.schema_manager.apply_schema_async()
        _driver.answer()
    elif args.role == "reset":
        await _sql(
            url,
            "TRUNCATE procrastinate_events, procrastinate_periodic_defers, procrastinate_jobs, "
            "procrastinate_workers",
        )
        _driver.answer()
    elif args.role == "fill":
        app = _app(url)
        async with app.open_async():
            await _fill(app, args.jobs, args.batch)
        _driver.answer()
    elif args.role == "verify":
        ((done, attempts_once, pending, last),) = await _sql(
            url,
            "SELECT count(*) FILTER (WHERE status = 'succeeded'), "
            "count(*) FILTER (WHERE status = 'succeeded' AND attempts = 1), "
            "count(*) FILTER (WHERE status = 'todo'), "
            "(SELECT extract(epoch FROM max(at))::float8 FROM procrastinate_events "
            " WHERE type = 'succeeded') FROM procrastinate_jobs",
        )
        _driver.answer(
            done=done, done_once=attempts_once, journaled=done, pending=pending, last_done_at=last
        )
    elif args.role in ("enqueue-single", "enqueue-batch"):
        await _enqueue(args, args.role == "enqueue-single")
    else:
        await _work(args)


if __name__ == "__main__":
    asyncio.run(_main())
