"""A worker process for the PostgreSQL tests and benchmarks.

Opens its storage and connections, prints ``ready``, waits for a line on
stdin (GO), runs until idle (or until SIGTERM with ``--forever``), then prints
one JSON line with what it did. Handlers: ``noop`` (tests.integration.tasks)
or ``marked``, which appends ``start``/``end`` lines (job id, run, pid, time)
to ``--log`` so that the parent can check that no job ran twice at once.

    python -m tests.integration._workers.pg_worker URL [--handler noop|marked] ...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from datetime import timedelta

from venturi._enqueue import utcnow
from venturi.storage import ClaimRequest
from venturi.storage.postgres import AsyncPostgresStorage
from venturi.worker import Worker, WorkerConfig

from tests.integration._workers.pg_tasks import MarkedHandler, MarkLog, RunRecorder
from tests.integration.tasks import NoopHandler


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--handler", choices=("noop", "marked"), default="noop")
    parser.add_argument("--claim-batch", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--poll", type=float, default=1.0)
    parser.add_argument("--log", default=None)
    parser.add_argument("--forever", action="store_true")
    return parser.parse_args()


async def _warm_up(storage: AsyncPostgresStorage) -> None:
    """Open the pool and the claim and completion connections before GO."""
    await storage.pending_counts_by_kind()
    request = ClaimRequest(
        ("default",), ("venturi.warmup",), 1, "warmup", timedelta(seconds=1), "w"
    )
    await storage.claim(request, now=utcnow())
    await storage.heartbeat([("none", "none")], lease_duration=timedelta(seconds=1), now=utcnow())


async def _main(args: argparse.Namespace) -> None:
    storage = AsyncPostgresStorage(args.url, pool_size=2)
    try:
        await storage.migrate()
        await _warm_up(storage)
        lease = timedelta(seconds=args.lease)
        config = WorkerConfig(
            claim_batch=args.claim_batch,
            concurrency=args.concurrency,
            lease_duration=lease,
            heartbeat_interval=lease / 3,
            poll_interval=timedelta(seconds=args.poll),
            reclaim_interval=timedelta(seconds=min(15.0, args.lease / 2)),
            install_signal_handlers=args.forever,
        )
        log = MarkLog(args.log) if args.log else None
        worker: Worker[RunRecorder | None] = Worker(log, storage, config=config)
        if args.handler == "marked":
            worker.register(MarkedHandler())
        else:
            worker.register(NoopHandler())
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        started = time.time()
        cpu = time.process_time()
        stats = await (worker.run() if args.forever else worker.run_until_idle())
        report = {
            "pid": os.getpid(),
            "completed": stats.completed,
            "started": started,
            "ended": time.time(),
            "cpu_s": time.process_time() - cpu,
        }
        print(json.dumps(report), flush=True)
    finally:
        await storage.close()


if __name__ == "__main__":
    asyncio.run(_main(_args()))
