"""A worker process for the rate limit tests: runs ``RateLimited`` and ``PerAccount``
jobs for ``--seconds`` after GO and logs when each job was claimed.

The log line of a job is ``<job id> <kind> <claim time>``: the claim's time is the
one its slot was taken at (and the run's start: limited jobs are claimed only to
start at once), read by wrapping the storage's ``claim``.

    python -m tests.integration._workers.rate_worker URL --log FILE --seconds S
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import datetime, timedelta
from typing import Any

from venturi.storage import AsyncStorage, ClaimedJob, ClaimRequest
from venturi.storage._url import sqlite_path
from venturi.storage.postgres import AsyncPostgresStorage
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig

from tests.integration._workers.rate_tasks import PerAccount, RateLimited


class RateLimitedHandler(Handler[RateLimited, Any, None]):
    TASK = RateLimited

    async def handle(self, task: RateLimited, ctx: Context[Any], state: None) -> Outcome[None]:
        await asyncio.sleep(0.01)
        return Outcome.completed()


class PerAccountHandler(Handler[PerAccount, Any, None]):
    TASK = PerAccount

    async def handle(self, task: PerAccount, ctx: Context[Any], state: None) -> Outcome[None]:
        return Outcome.completed()


def recording(storage_cls: type[Any], log: Any) -> type[Any]:
    class Recording(storage_cls):  # type: ignore[misc]
        async def claim(self, request: ClaimRequest, *, now: datetime) -> list[ClaimedJob]:
            jobs: list[ClaimedJob] = await super().claim(request, now=now)
            for job in jobs:
                log.write(f"{job.id} {job.kind} {now.timestamp()!r}\n")
            log.flush()
            return jobs

    return Recording


async def _main(args: argparse.Namespace) -> None:
    with open(args.log, "a", encoding="utf-8") as log:
        if args.url.startswith("postgresql"):
            storage: AsyncStorage = recording(AsyncPostgresStorage, log)(args.url, pool_size=2)
        else:
            storage = recording(AsyncSqliteStorage, log)(SqliteStorage(sqlite_path(args.url)))
        try:
            await storage.migrate()
            config = WorkerConfig(
                concurrency=10, poll_interval=timedelta(seconds=1), install_signal_handlers=False
            )
            worker: Worker[None] = Worker(None, storage, config=config)
            worker.register(RateLimitedHandler()).register(PerAccountHandler())
            print("ready", flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            asyncio.get_running_loop().call_later(args.seconds, worker.request_shutdown)
            await worker.run()
            print("done", flush=True)
        finally:
            await storage.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--log", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    asyncio.run(_main(parser.parse_args()))
