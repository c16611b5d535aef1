"""pgqueuer 1.6 on PostgreSQL, with asyncpg or psycopg (the benchmark's peers environment).

``--variant asyncpg|psycopg`` picks the driver. Each job carries ``{"n": i}`` as its
payload, as venturi's do. ``--concurrency C`` is pgqueuer's ``batch_size``: how many jobs
a worker takes per dequeue, each run as its own task (pgqueuer's ``max_concurrent_tasks``
must be at least twice the batch, so it is left unlimited). Processing is
``QueueManager.run(mode=drain)``.

    python -m bench.systems.pgqueuer_pg ROLE --url postgresql://... --variant asyncpg
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import psycopg
from pgqueuer.db import AsyncpgDriver, PsycopgDriver
from pgqueuer.models import Job
from pgqueuer.qm import QueueManager
from pgqueuer.queries import Queries

from bench import _driver

ROLES = ("setup", "reset", "fill", "verify", "enqueue-single", "enqueue-batch", "worker")


async def _connect(url: str, variant: str) -> tuple[Any, Any]:
    """(connection, pgqueuer driver) for the variant."""
    if variant == "psycopg":
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        return conn, PsycopgDriver(conn)
    conn = await asyncpg.connect(url)
    return conn, AsyncpgDriver(conn)


async def _sql(url: str, sql: str) -> list[Any]:
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


def _payload(n: int) -> bytes:
    return json.dumps({"n": n}).encode()


async def _fill(queries: Queries, jobs: int, batch: int) -> None:
    for start in range(0, jobs, batch):
        ns = range(start, min(start + batch, jobs))
        await queries.enqueue(["noop"] * len(ns), [_payload(n) for n in ns], [0] * len(ns))


async def _in_thread(fn: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(None, fn)


async def _enqueue(args: Any, single: bool) -> None:
    conn, driver = await _connect(args.url, args.variant)
    try:
        queries = Queries(driver)
        await queries.enqueue("noop", _payload(-1))  # warm
        await _sql(args.url, "DELETE FROM pgqueuer")
        await _in_thread(_driver.ready)
        watch = _driver.Stopwatch()
        if single:
            for n in range(args.jobs):
                await queries.enqueue("noop", _payload(n))
        else:
            await _fill(queries, args.jobs, args.batch)
        fields = watch.fields()
        await _in_thread(lambda: _driver.report(**fields))
    finally:
        await conn.close()


async def _work(args: Any) -> None:
    conn, driver = await _connect(args.url, args.variant)
    try:
        qm = QueueManager(Queries(driver))

        @qm.entrypoint("noop")
        async def noop(job: Job) -> None:
            return None

        await _in_thread(_driver.ready)
        watch = _driver.Stopwatch()
        await qm.run(batch_size=args.concurrency, mode=_drain())
        fields = watch.fields()
        await _in_thread(lambda: _driver.report(**fields))
    finally:
        await conn.close()


def _drain() -> Any:
    from pgqueuer.types import QueueExecutionMode

    return QueueExecutionMode.drain


async def _main() -> None:
    args = _driver.arguments(ROLES)
    url = args.url
    if args.role == "setup":
        conn, driver = await _connect(url, "asyncpg")
        try:
            await Queries(driver).install()
        finally:
            await conn.close()
        _driver.answer()
    elif args.role == "reset":
        await _sql(url, "TRUNCATE pgqueuer, pgqueuer_log, pgqueuer_statistics")
        _driver.answer()
    elif args.role == "fill":
        conn, driver = await _connect(url, "asyncpg")
        try:
            await _fill(Queries(driver), args.jobs, args.batch)
        finally:
            await conn.close()
        _driver.answer()
    elif args.role == "verify":
        (row,) = await _sql(
            url,
            "SELECT (SELECT count(*) FROM pgqueuer_log WHERE status = 'successful') AS done, "
            "(SELECT count(DISTINCT job_id) FROM pgqueuer_log WHERE status = 'successful') AS once, "
            "(SELECT count(*) FROM pgqueuer) AS pending, "
            "(SELECT extract(epoch FROM max(created))::float8 FROM pgqueuer_log "
            " WHERE status = 'successful') AS last",
        )
        _driver.answer(
            done=row["done"], done_once=row["once"], journaled=row["done"],
            pending=row["pending"], last_done_at=row["last"],
        )  # fmt: skip
    elif args.role in ("enqueue-single", "enqueue-batch"):
        await _enqueue(args, args.role == "enqueue-single")
    else:
        await _work(args)


if __name__ == "__main__":
    asyncio.run(_main())
