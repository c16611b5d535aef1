"""Upgrading a PostgreSQL schema the previous release filled: nothing lost, nothing changed.

The schema is built at the previous release's version from its migrations and
filled with jobs in every state (see ``upgrade_fill``); every row is digested over
the columns it had, the schema is migrated to the latest version, and each row
is digested again. The same at 1,000,000 jobs, timed:
tests/benchmarks/test_migration_bench.py.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, ClassVar

import psycopg
import pytest
from venturi import AsyncQueue
from venturi.errors import SchemaOutOfDate
from venturi.storage.postgres import AsyncPostgresStorage, _schema, migrate
from venturi.storage.postgres._config import parse, render
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig

from tests.conformance.tasks import Plain
from tests.integration.upgrade_fill import (
    PREVIOUS_RELEASE,
    build_previous_release,
    changed_rows,
    drop_after,
    fill,
    take_digests,
)
from tests.pg_fixtures import ADMIN_URL, schema_url

pytestmark = pytest.mark.postgres

JOBS = 20_000


class PlainHandler(Handler[Plain, Any, None]):
    TASK: ClassVar[type[Plain]] = Plain

    async def handle(self, task: Plain, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.completed()


def test_every_row_survives_the_upgrade_unchanged(pg_schema: str) -> None:
    build_previous_release(pg_schema)
    entries = fill(pg_schema, JOBS)
    assert entries > JOBS  # the journal has rows of its own to check
    columns = take_digests(pg_schema)
    assert migrate(schema_url(pg_schema)) == _schema.latest_version() > PREVIOUS_RELEASE
    unchanged = {"jobs": 0, "journal": 0, "concurrency_locks": 0}
    assert changed_rows(pg_schema, columns) == unchanged
    # The check sees a change when there is one: a control on one row of each table.
    drop_after(pg_schema)
    s = f'"{pg_schema}"'
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f"UPDATE {s}.job_states SET carry = '{{}}' WHERE seq = 1")
        conn.execute(f"UPDATE {s}.job_bodies SET payload = '{{}}' WHERE seq = 2")
        conn.execute(f"DELETE FROM {s}.journal_entries WHERE (seq, n) = (SELECT min(seq), 1 FROM {s}.journal_entries)")
        conn.execute(f"DELETE FROM {s}.concurrency_holds WHERE key = (SELECT min(key) FROM {s}.concurrency_holds)")
    assert changed_rows(pg_schema, columns) == {"jobs": 2, "journal": 1, "concurrency_locks": 1}


def test_jobs_are_numbered_in_the_order_of_their_ids_and_new_ones_after_them(pg_schema: str) -> None:
    build_previous_release(pg_schema)
    fill(pg_schema, 500)
    url = schema_url(pg_schema)
    migrate(url)
    s = f'"{pg_schema}"'
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        rows = conn.execute(f"SELECT seq, id FROM {s}.job_bodies ORDER BY seq").fetchall()
    assert [seq for seq, _ in rows] == list(range(1, 501))
    assert [job_id for _, job_id in rows] == sorted(job_id for _, job_id in rows)

    async def enqueue() -> str:
        async with AsyncQueue(AsyncPostgresStorage(url)) as queue:
            return (await queue.enqueue(Plain(1))).job_id

    job_id = asyncio.run(enqueue())
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        found = conn.execute(f"SELECT seq FROM {s}.job_bodies WHERE id = %s", (job_id,)).fetchone()
    assert found == (501,)


def test_a_worker_that_does_not_migrate_refuses_an_older_schema(pg_schema: str) -> None:
    build_previous_release(pg_schema)
    storage = AsyncPostgresStorage(schema_url(pg_schema))
    worker: Worker[None] = Worker(
        None, storage, config=WorkerConfig(install_signal_handlers=False), migrate=False
    )
    worker.register(PlainHandler())
    with pytest.raises(SchemaOutOfDate, match=f"version {PREVIOUS_RELEASE}.*venturi migrate"):
        asyncio.run(_run_then_close(worker, storage))


def test_upgraded_jobs_are_claimed_and_run(pg_schema: str) -> None:
    build_previous_release(pg_schema)
    storage_url = schema_url(pg_schema)
    migrate(storage_url)

    async def play() -> int:
        storage = AsyncPostgresStorage(storage_url)
        try:
            async with AsyncQueue(storage) as queue:
                await queue.enqueue_many([Plain(n) for n in range(50)])
            worker: Worker[None] = Worker(
                None, storage,
                config=WorkerConfig(install_signal_handlers=False, poll_interval=timedelta(milliseconds=50)),
                migrate=False,
            )  # fmt: skip
            worker.register(PlainHandler())
            return (await worker.run_until_idle()).completed
        finally:
            await storage.close()

    assert asyncio.run(play()) == 50


async def _run_then_close(worker: Worker[None], storage: AsyncPostgresStorage) -> None:
    try:
        await worker.run_until_idle()
    finally:
        await storage.close()


def test_a_write_of_the_previous_release_waits_while_the_migration_copies(pg_schema: str) -> None:
    """Once migration 14 has read the old tables, a write of the previous release into
    them cannot land (it would be dropped with them): it waits for the migration's lock.
    Here the migration is held open just after its copy, and the write gives up waiting."""
    build_previous_release(pg_schema)
    fill(pg_schema, 100)
    settings = parse(schema_url(pg_schema))
    [split] = [m for m in _schema.migrations() if m.version == PREVIOUS_RELEASE + 1]
    sql = render(split.sql, settings)
    copied = sql[: sql.index("DROP FUNCTION")]  # the new tables made and filled
    with psycopg.connect(ADMIN_URL) as migration, psycopg.connect(ADMIN_URL) as producer:
        migration.execute(copied.encode())
        producer.execute("SET lock_timeout = '300ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            producer.execute(
                f"""INSERT INTO "{pg_schema}".jobs (id, kind, queue, priority, state, payload,
                    carry, run_at) VALUES ('zz-late', 'k', 'q', 0, 'pending', '{{}}', 'null', now())"""
            )
        producer.rollback()
        migration.rollback()
