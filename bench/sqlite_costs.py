"""Where a SQLite drain's time goes: each of the storage's statements, timed by name.

``sqlite-process`` gives one figure, jobs per second. This splits it. It drains no-op jobs
twice from the same filled file (synchronous=FULL, as the benchmark), and times every
statement the storage sends, by its name in queries.sql, with the rest of each call
(the storage's own Python: reading rows, building documents) beside them:

- ``alone``: the storage's ``claim`` and ``finish`` called in a loop, 1,000 jobs a claim,
  no event loop: what the statements and their Python cost by themselves;
- ``in a worker``: a ``Worker`` at concurrency 100 (its defaults otherwise), the
  storage on its own thread, as ``sqlite-process`` runs it. Every call there also waits
  for the GIL, which the worker's event loop holds while it runs jobs; the difference
  between the two columns is that wait.

The storage thread is a worker's bottleneck when its busy share is near 100%.

    .venv/bin/python -m bench.sqlite_costs [--jobs 100000] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from venturi import Queue
from venturi._ids import new_lease_token
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimRequest, Resolution, RunResult
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.storage.sqlite import _storage as sqlite_storage
from venturi.worker import Worker, WorkerConfig

from bench.generated.tasks import Noop
from bench.handlers.noop import NoopHandler

BATCH = 1000
#: The storage calls whose time is split into statements (the rest is upkeep). A worker's
#: claim that comes while a finish runs joins it (``finish_and_claim``, _worker_writes.py):
#: without it here, the worker's claims and finishes would go unmeasured.
CALLS = ("claim", "finish", "finish_and_claim")

Costs = dict[str, float]  # statement name (or "python: claim") -> seconds in all


class _TimedConnection:
    """The storage's connection, timing each ``execute`` by the name of its query.

    A query's time runs to the end of its first step (``execute`` returns then): a read
    whose rows are fetched later counts them in the calling function's Python."""

    def __init__(self, conn: Any, names: dict[str, str], costs: Costs) -> None:
        self._conn = conn
        self._names = names
        self._costs = costs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, sql: str, *params: Any) -> Any:
        return self._timed(self._conn.execute, sql, params)

    def executemany(self, sql: str, *params: Any) -> Any:
        return self._timed(self._conn.executemany, sql, params)

    def _timed(self, call: Callable[..., Any], sql: str, params: tuple[Any, ...]) -> Any:
        started = time.perf_counter()
        try:
            return call(sql, *params)
        finally:
            name = self._names.get(sql) or sql.split(None, 1)[0].upper()  # BEGIN, COMMIT, ...
            self._costs[name] += time.perf_counter() - started


@contextmanager
def _timed(storage: SqliteStorage, costs: Costs) -> Iterator[None]:
    """Time ``storage``'s statements and, per call in ``CALLS``, the Python around them."""
    names = {sql: name for name, sql in sqlite_storage._QUERIES.items()}  # pyright: ignore[reportPrivateUsage]
    real = storage._conn  # pyright: ignore[reportPrivateUsage]
    storage._conn = _TimedConnection(real, names, costs)  # type: ignore[assignment]  # pyright: ignore[reportPrivateUsage]
    originals = {name: getattr(storage, name) for name in CALLS}

    def timed_call(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            before = sum(costs.values())
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                spent = time.perf_counter() - started
                costs[f"python: {name}"] += spent - (sum(costs.values()) - before)
                costs[f"call: {name}"] += spent

        return run

    for name, call in originals.items():
        setattr(storage, name, timed_call(name, call))
    try:
        yield
    finally:
        for name in CALLS:
            delattr(storage, name)
        storage._conn = real  # pyright: ignore[reportPrivateUsage]


def _fill(path: str, jobs: int) -> None:
    with Queue(SqliteStorage(path, synchronous="NORMAL")) as queue:  # untimed
        for start in range(0, jobs, BATCH):
            queue.enqueue_many(Noop(n=n) for n in range(start, min(start + BATCH, jobs)))


def _copy(filled: str, path: str) -> None:
    """The filled database as a new file, its write-ahead log with it."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
        if os.path.exists(filled + suffix):
            shutil.copy(filled + suffix, path + suffix)


def _alone(path: str, costs: Costs) -> tuple[int, float]:
    """Claim and finish every job, the storage's calls in a loop: (jobs, seconds)."""
    storage = SqliteStorage(path, synchronous="FULL")
    done = 0
    started = time.perf_counter()
    try:
        with _timed(storage, costs):
            while True:
                request = ClaimRequest(
                    ("default",), (Noop.KIND,), BATCH, new_lease_token(), timedelta(minutes=5),
                    "costs", start=100,
                )  # fmt: skip
                jobs = storage.claim(request, now=datetime.now(UTC))
                if not jobs:
                    break
                now = datetime.now(UTC)
                purge = now + timedelta(days=7)
                results = [
                    RunResult(
                        job.id, job.lease_token, Resolution.COMPLETED,
                        JournalEntry(now, job.run_count, JournalEvent.COMPLETED), purge_after=purge,
                    )
                    for job in jobs
                ]  # fmt: skip
                if not all(storage.finish(results, now=now)):
                    raise RuntimeError("a fence failed in a drain with no other worker")
                done += len(jobs)
    finally:
        storage.close()
    return done, time.perf_counter() - started


def _in_worker(path: str, costs: Costs) -> tuple[int, float]:
    """Drain with a Worker at concurrency 100: (jobs, seconds)."""

    async def drain() -> tuple[int, float]:
        sync = SqliteStorage(path, synchronous="FULL")
        storage = AsyncSqliteStorage(sync)
        config = WorkerConfig(concurrency=100, install_signal_handlers=False)
        worker: Worker[None] = Worker(None, storage, config=config, migrate=False)
        worker.register(NoopHandler())
        try:
            with _timed(sync, costs):
                started = time.perf_counter()
                stats = await worker.run_until_idle()
                return stats.completed, time.perf_counter() - started
        finally:
            await storage.close()

    return asyncio.run(drain())


def _table(title: str, runs: list[tuple[int, float, Costs]]) -> list[str]:
    jobs = runs[0][0]
    rate = statistics.median(done / seconds for done, seconds, _ in runs)
    per_job = {
        name: statistics.median(costs[name] for _, _, costs in runs) / jobs * 1e6
        for name in {name for _, _, costs in runs for name in costs}
    }
    busy = sum(per_job.get(f"call: {name}", 0.0) for name in CALLS)
    wall = statistics.median(seconds for _, seconds, _ in runs) / jobs * 1e6
    lines = [
        f"== {title}: {rate:,.0f} jobs/s (median of {len(runs)}); claim + finish "
        f"{busy:.1f} µs per job of {wall:.1f} ({busy / wall:.0%} of the time)"
    ]
    for name, micros in sorted(per_job.items(), key=lambda item: -item[1]):
        if not name.startswith("call: ") and micros >= 0.01:
            lines.append(f"  {name:28s} {micros:7.2f} µs/job")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="venturi-sqlite-costs-") as scratch:
        filled = os.path.join(scratch, "filled.sqlite3")
        path = os.path.join(scratch, "drain.sqlite3")
        _fill(filled, args.jobs)
        runs: dict[str, list[tuple[int, float, Costs]]] = {"alone": [], "in a worker": []}
        for _ in range(args.reps):  # interleaved, so that a slower minute slows both
            for mode, drain in (("alone", _alone), ("in a worker", _in_worker)):
                _copy(filled, path)
                costs: Costs = collections.defaultdict(float)
                done, seconds = drain(path, costs)
                if done != args.jobs:
                    raise SystemExit(f"{mode}: completed {done} of {args.jobs} jobs")
                runs[mode].append((done, seconds, costs))
    print(f"{args.jobs:,} no-op jobs, synchronous=FULL, {args.reps} runs of each, interleaved")
    for mode, measured in runs.items():
        print("\n".join(_table(mode, measured)))


if __name__ == "__main__":
    main()
