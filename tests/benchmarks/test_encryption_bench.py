"""What encryption at rest costs: the drain of a task with one sensitive field, encrypted
(a key configured) against the same task without a key (redaction only) and against the
same shape with no sensitive field, on SQLite and PostgreSQL.

The tasks are tests/sensitive's ``PlainNote`` and ``SealedNote`` (``text: string``, the
latter ``sensitive: true``), a 40-character text each. One worker process, 20,000 no-op
jobs (``ENC_BENCH_JOBS``), the three runs interleaved, three times; prints each rate, the
medians, and the enqueue rate (batches of 1,000) of each. Asserts only that every job
completed.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_encryption_bench.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from venturi import Queue, Task
from venturi._keyring import configure_encryption, new_key, reset_encryption
from venturi.storage import AsyncStorage
from venturi.storage.postgres import AsyncPostgresStorage
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Worker, WorkerConfig

from tests.pg_fixtures import ADMIN_URL
from tests.sensitive.generated.tasks import PlainNote, SealedNote
from tests.sensitive.handlers.plain_note import PlainNoteHandler
from tests.sensitive.handlers.sealed_note import SealedNoteHandler

pytest.importorskip("cryptography")
pytestmark = pytest.mark.benchmark

JOBS = int(os.environ.get("ENC_BENCH_JOBS", "20000"))
REPS = 3
KEY = new_key()
TEXT = "someone-{:08d}@mail.example.org"  # 40 characters or so, an address's length

#: name -> (task class, keys configured)
VARIANTS: dict[str, tuple[type[Task[Any]], bool]] = {
    "no sensitive field": (PlainNote, False),
    "sensitive, no key (redaction only)": (SealedNote, False),
    "sensitive, encrypted (AES-GCM)": (SealedNote, True),
}


def _keys(on: bool) -> None:
    configure_encryption([("k1", KEY)] if on else None)


def _enqueue(queue_of: Callable[[], Queue], cls: type[Task[Any]]) -> float:
    tasks = [cls(text=TEXT.format(n)) for n in range(JOBS)]  # type: ignore[call-arg]
    with queue_of() as queue:
        started = time.perf_counter()
        for start in range(0, JOBS, 1000):
            queue.enqueue_many(tasks[start : start + 1000])
        return JOBS / (time.perf_counter() - started)


def _drain(storage: AsyncStorage) -> float:
    config = WorkerConfig(install_signal_handlers=False)
    worker: Worker[object] = Worker(object(), storage, config=config)
    worker.register(PlainNoteHandler())
    worker.register(SealedNoteHandler())

    async def run() -> int:
        try:
            return (await worker.run_until_idle()).completed
        finally:
            await storage.close()  # the worker closes only the storages it opened

    started = time.perf_counter()
    completed = asyncio.run(run())
    elapsed = time.perf_counter() - started
    assert completed == JOBS
    return JOBS / elapsed


#: An empty database: how to open a queue on it and a worker's storage.
Fresh = Callable[[], tuple[Callable[[], Queue], Callable[[], AsyncStorage]]]


def _compare(label: str, fresh: Fresh) -> None:
    drains: dict[str, list[float]] = {name: [] for name in VARIANTS}
    enqueues: dict[str, list[float]] = {name: [] for name in VARIANTS}
    try:
        for _ in range(REPS):
            for name, (cls, keys) in VARIANTS.items():
                queue_of, storage = fresh()
                _keys(keys)
                enqueues[name].append(_enqueue(queue_of, cls))
                drains[name].append(_drain(storage()))
                print(f"  {label}, {name}: enqueue {enqueues[name][-1]:,.0f}/s, "
                      f"drain {drains[name][-1]:,.0f} jobs/s", flush=True)  # fmt: skip
    finally:
        reset_encryption()
    base = statistics.median(drains["no sensitive field"])
    print(f"\n{label}, {JOBS:,} jobs, medians of {REPS}:")
    for name in VARIANTS:
        drain, enqueue = statistics.median(drains[name]), statistics.median(enqueues[name])
        print(f"  {name}: drain {drain:,.0f} jobs/s ({drain / base:.0%}), enqueue {enqueue:,.0f}/s "
              f"(runs: {', '.join(f'{r:,.0f}' for r in drains[name])})")  # fmt: skip


def test_sqlite_drain_with_and_without_encryption(tmp_path: Path) -> None:
    runs = iter(range(1_000))

    def fresh() -> tuple[Callable[[], Queue], Callable[[], AsyncStorage]]:
        path = str(tmp_path / f"bench-{next(runs)}.db")
        return (lambda: Queue(SqliteStorage(path)),
                lambda: AsyncSqliteStorage(SqliteStorage(path, synchronous="FULL")))  # fmt: skip

    _compare("SQLite FULL", fresh)


@pytest.mark.postgres
def test_postgres_drain_with_and_without_encryption(pg_url: str, pg_schema: str) -> None:
    with Queue(pg_url):
        pass  # migrated

    def fresh() -> tuple[Callable[[], Queue], Callable[[], AsyncStorage]]:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            s = f'"{pg_schema}"'
            conn.execute(f"TRUNCATE {s}.job_states, {s}.job_bodies, {s}.journal_entries")
            conn.execute(f"VACUUM ANALYZE {s}.job_states, {s}.job_bodies")
        return (lambda: Queue(pg_url)), (lambda: AsyncPostgresStorage(pg_url))

    _compare("PostgreSQL", fresh)
