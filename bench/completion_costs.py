"""What a batch of completions costs the server: ``complete_runs`` against ``end_runs``.

A worker's flush of 1,000 no-op completions goes through ``complete_runs`` (three arrays,
``_plain_completions.py``); any other batch through ``end_runs`` (one JSON document). This
claims 1,000 jobs at a time through ``AsyncPostgresStorage`` and finishes them, taking the
two statements in turn, and reads the CPU time of the server's processes, its postmaster and its
children (``/proc``), and the wall time around each ``finish``. The server's CPU is the
steadier figure: the wall time includes the commit's wait for its disk.

It runs on a database of its own on the server (``--admin-url``) and drops it at the end.

    .venv/bin/python -m bench.completion_costs [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from venturi import Queue
from venturi._clock import utcnow
from venturi._ids import new_lease_token
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimRequest, Resolution, RunResult
from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage
from venturi.storage.postgres import _storage_async as storage_module
from venturi.storage.postgres._plain_completions import plain_completion_params

from bench._server import Server, server_cpu_ms
from bench.generated.tasks import Noop

DATABASE = "venturi_bench_completions"
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
BATCH = 1_000


def _results(jobs: list[Any], now: datetime) -> list[RunResult]:
    entry = JournalEntry(now, 1, JournalEvent.COMPLETED)
    purge = now + timedelta(days=1)
    return [
        RunResult(job.id, job.lease_token, Resolution.COMPLETED, entry._replace(run=job.run_count),
                  purge_after=purge)
        for job in jobs
    ]  # fmt: skip


async def measure(
    url: str, rounds: int, postmaster: int
) -> dict[str, tuple[list[float], list[float]]]:
    """``rounds`` finishes of each statement, alternating: (server CPU ms, wall ms) each."""
    with Queue(PostgresStorage(url, pool_size=1)) as queue:
        for start in range(0, 2 * rounds * BATCH, BATCH):
            queue.enqueue_many([Noop(n=n) for n in range(start, start + BATCH)])
    storage = AsyncPostgresStorage(url, pool_size=2)
    chosen: Callable[..., dict[str, Any] | None] = plain_completion_params
    # finish() reads the name from its module: declining every batch there sends it to end_runs.
    names = storage_module.__dict__
    found: dict[str, tuple[list[float], list[float]]] = {
        "complete_runs": ([], []),
        "end_runs": ([], []),
    }
    try:
        for n in range(2 * rounds):
            name = "complete_runs" if n % 2 else "end_runs"
            names["plain_completion_params"] = chosen if n % 2 else (lambda results, now: None)
            now = utcnow()
            request = ClaimRequest(("default",), (Noop.KIND,), BATCH, new_lease_token(),
                                   timedelta(minutes=5), "w", start=BATCH)  # fmt: skip
            results = _results(await storage.claim(request, now=now), now)
            cpu, wall = server_cpu_ms(postmaster), time.perf_counter()
            held = await storage.finish(results, now=now)
            found[name][1].append((time.perf_counter() - wall) * 1000)
            found[name][0].append(server_cpu_ms(postmaster) - cpu)
            if len(held) != BATCH or not all(held):
                raise SystemExit(f"completion_costs: {name} ended {sum(held)} of {len(held)} runs")
    finally:
        names["plain_completion_params"] = chosen
        await storage.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="bench.completion_costs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--admin-url", default=os.environ.get("VENTURI_BENCH_ADMIN_URL", DEFAULT_ADMIN)
    )
    parser.add_argument(
        "--rounds", type=int, default=20, help="finishes of 1,000 of each statement"
    )
    parser.add_argument("--db-suffix", default="", help="appended to the database's name")
    args = parser.parse_args()
    database = DATABASE + args.db_suffix
    server = Server(args.admin_url)
    server.create_database(database)
    try:
        found = asyncio.run(measure(server.uri(database), args.rounds, server.postmaster()))
    finally:
        server.drop_database(database)
        server.close()
    print(f"completion_costs: {args.rounds} alternating finishes of {BATCH:,} no-op runs each")
    print(f"{'statement':14s} {'server CPU ms/1,000':>20s} {'wall ms/1,000 (median)':>23s}")
    for name, (cpu, wall) in found.items():
        print(f"{name:14s} {sum(cpu) / len(cpu):20.1f} {statistics.median(wall):23.1f}")


if __name__ == "__main__":
    main()
