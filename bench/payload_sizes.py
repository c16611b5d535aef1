"""What a payload's size costs the PostgreSQL drain: the worker, end to end, at several sizes.

The benchmark's no-op job carries a payload of a dozen bytes (``{"n":…}``); a user's often
carries hundreds. On PostgreSQL each of a job's two updates (its claim, its completion)
writes a new version of the whole row, payload included, and the WAL for it; a payload
longer than about 2 KB is kept out of line (TOAST), and an update then copies only its
pointer. This drains the same number of ``Padded`` jobs (``bench/tasks.venturi.yaml``: a
number and a string of padding) with one worker at concurrency 100, in-process, at each
size in turn and repeated, and prints each size's rate beside the first size's, with what
the worker's process, the server's processes and the WAL spent per job.

Each run enqueues into a fresh schema and settles it (``VACUUM ANALYZE``, a checkpoint)
before the worker starts, as the benchmark's processing runs do. It runs on a database of
its own on the server (``--admin-url``) and drops it at the end.

    .venv/bin/python -m bench.payload_sizes [--reps 4] [--jobs 20000] [--sizes 0,500,1500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from dataclasses import dataclass

from venturi import Queue
from venturi.storage.postgres import AsyncPostgresStorage, PostgresStorage
from venturi.worker import Worker, WorkerConfig

from bench._measurement import RunFailed
from bench._server import Server, server_cpu_ms
from bench.generated.tasks import Padded
from bench.handlers.padded import PaddedHandler

DATABASE = "venturi_bench_payloads"
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
SCHEMA = "payloads"
BATCH = 1_000


@dataclass(frozen=True)
class Run:
    rate: float  # jobs/s
    worker_us: float  # the worker process's CPU per job
    server_us: float  # the server's processes' CPU per job (server_cpu_ms)
    wal_per_job: float  # bytes, the whole server's (others' writes meanwhile included)
    payload_bytes: float  # the stored payloads' mean length, as the jobs table holds them


def _process_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


async def _drain(url: str) -> int:
    storage = AsyncPostgresStorage(url)
    try:
        await storage.open()
        config = WorkerConfig(concurrency=100, install_signal_handlers=False)
        worker: Worker[None] = Worker(None, storage, config=config, migrate=False)
        worker.register(PaddedHandler())
        stats = await worker.run_until_idle()
        return stats.completed
    finally:
        await storage.close()


def run_size(server: Server, database: str, jobs: int, size: int) -> Run:
    """Enqueue ``jobs`` jobs with ``size`` bytes of padding, settle, drain, and count."""
    url = f"{server.uri(database)}?venturi_schema={SCHEMA}"
    server.sql(database, f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    pad = "x" * size
    with Queue(PostgresStorage(url)) as queue:
        for start in range(0, jobs, BATCH):
            queue.enqueue_many(Padded(n=n, pad=pad) for n in range(start, min(start + BATCH, jobs)))
    server.settle(database)
    before = server.snapshot(database)
    postmaster = server.postmaster()
    cpu_ms, process_s, wall = server_cpu_ms(postmaster), _process_cpu_s(), time.perf_counter()
    completed = asyncio.run(_drain(url))
    wall = time.perf_counter() - wall
    process_s = _process_cpu_s() - process_s
    server.wait_for_exits(database)  # the worker's backends gone, their time reaped
    cpu_ms = server_cpu_ms(postmaster) - cpu_ms
    wal = server.wal_bytes(before, server.snapshot(database))
    done = server.one_in(
        database, f"SELECT count(*) FROM {SCHEMA}.job_states WHERE state = 'completed' AND run_count = 1"
    )
    stored = server.one_in(database, f"SELECT avg(octet_length(payload)) FROM {SCHEMA}.job_bodies")
    if completed != jobs or done != jobs:
        raise RunFailed(f"payload_sizes: +{size} B: {completed} completed, {done} once, of {jobs}")
    return Run(jobs / wall, process_s * 1e6 / jobs, cpu_ms * 1e3 / jobs, wal / jobs, float(stored))


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of byte counts: {text!r}") from None
    if not sizes or any(size < 0 for size in sizes):
        raise argparse.ArgumentTypeError(f"one or more byte counts, none below 0: {text!r}")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="bench.payload_sizes", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--admin-url", default=os.environ.get("VENTURI_BENCH_ADMIN_URL", DEFAULT_ADMIN)
    )
    parser.add_argument("--reps", type=int, default=4, help="runs of each size (interleaved)")
    parser.add_argument(
        "--jobs", type=int, default=20_000, help="jobs per run (20,000, as processing)"
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=[0, 500, 1500],
        help="bytes of padding per payload, comma-separated (the first is the reference)",
    )
    parser.add_argument("--db-suffix", default="", help="appended to the database's name")
    args = parser.parse_args()
    if args.reps < 1 or args.jobs < 1:
        parser.error("--reps and --jobs: at least 1")
    database = DATABASE + args.db_suffix
    server = Server(args.admin_url)
    server.create_database(database)
    runs: dict[int, list[Run]] = {size: [] for size in args.sizes}
    try:
        for rep in range(args.reps):
            for size in runs:
                done = run_size(server, database, args.jobs, size)
                runs[size].append(done)
                print(f"  [{rep + 1}/{args.reps}] +{size:,} B {done.rate:9,.0f} jobs/s", flush=True)
    finally:
        server.drop_database(database)
        server.close()
    reference = statistics.median(r.rate for r in runs[args.sizes[0]])
    print(f"\npayload_sizes: {args.jobs:,} Padded jobs, 1 worker at concurrency 100, "
          f"{args.reps} interleaved runs each")  # fmt: skip
    print(f"{'padding':>9s} {'jobs/s':>9s} {'of first':>8s} {'worker µs':>9s} {'server µs':>9s} "
          f"{'WAL B/job':>9s} {'payload B':>9s}  runs")  # fmt: skip
    for size, found in runs.items():
        rate = statistics.median(r.rate for r in found)
        print(
            f"{'+' + format(size, ',') + ' B':>9s} {rate:9,.0f} {rate / reference:8.0%} "
            f"{statistics.median(r.worker_us for r in found):9.1f} "
            f"{statistics.median(r.server_us for r in found):9.1f} "
            f"{statistics.median(r.wal_per_job for r in found):9,.0f} "
            f"{statistics.median(r.payload_bytes for r in found):9,.1f}  "
            + ", ".join(f"{r.rate:,.0f}" for r in found)
        )


if __name__ == "__main__":
    main()
