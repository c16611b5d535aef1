"""The processing run both venturi drivers time: one ``Worker`` draining the queue.

The drivers differ only in the storage they open and warm up; what is measured (the
worker at its defaults except ``concurrency``, GO, ``run_until_idle``, the report) is
written once here so that the two backends are timed the same way.
"""

from __future__ import annotations

import asyncio

from venturi.storage import AsyncStorage
from venturi.worker import Worker, WorkerConfig

from bench import _driver
from bench.handlers.noop import NoopHandler


async def drain(storage: AsyncStorage, concurrency: int, variant: str) -> None:
    """Drain the queue with one worker once the harness says GO, and report; closes nothing."""
    config = WorkerConfig(
        concurrency=concurrency, install_signal_handlers=False, **_driver.settings(variant)
    )
    worker: Worker[None] = Worker(None, storage, config=config, migrate=False)
    worker.register(NoopHandler())
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, _driver.ready)
    watch = _driver.Stopwatch()
    stats = await worker.run_until_idle()
    fields = watch.fields()
    await loop.run_in_executor(None, lambda: _driver.report(completed=stats.completed, **fields))
