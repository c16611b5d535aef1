"""Helpers for the worker integration tests: fast settings, background runs, polling."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from venturi import JobInfo, JobState, Queue
from venturi.worker import Handler, Worker, WorkerConfig

from tests.integration.tasks import Probe

#: Short leases and polls keep the suite fast; heartbeats stay well inside the lease.
FAST: dict[str, Any] = {
    "lease_duration": 2.0,
    "heartbeat_interval": 0.2,
    "poll_interval": 0.02,
    "drain_timeout": 2.0,
    "reclaim_interval": 0.1,
    "prune_interval": 0.1,
    "flush_linger": 0.001,
    "install_signal_handlers": False,
}


def fast_config(**overrides: Any) -> WorkerConfig:
    return WorkerConfig(**{**FAST, **overrides})


def make_worker(
    db: Path | str,
    handlers: Iterable[type[Handler[Any, Any, Any]]],
    probe: Probe | None = None,
    **overrides: Any,
) -> Worker[Probe]:
    # A path: the worker opens the database for its run and closes it afterwards.
    worker: Worker[Probe] = Worker(probe or Probe(), str(db), config=fast_config(**overrides))
    for handler in handlers:
        worker.register(handler())
    return worker


async def eventually(
    check: Callable[[], Any], *, timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> Any:
    """Poll ``check`` until it returns a truthy value; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or check}")
        await asyncio.sleep(interval)


def state_is(queue: Queue, job_id: str, *states: JobState) -> Callable[[], JobInfo[Any] | None]:
    def check() -> JobInfo[Any] | None:
        info = queue.get(job_id)
        return info if info.state in states else None

    return check


async def stop(worker: Worker[Any], task: asyncio.Task[Any]) -> Any:
    worker.request_shutdown()
    return await asyncio.wait_for(task, 10)
