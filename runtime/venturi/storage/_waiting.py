"""Waiting for a job to end by reading it again, each pause longer than the last.

The SQLite backend has no notifications, so ``wait`` polls: first after a
couple of milliseconds (most jobs waited on are short), then twice as long
each time up to a quarter of a second, so a long wait costs four reads a
second rather than a busy loop. The PostgreSQL backend wakes on completion
notifications instead (``postgres/_completions``) and falls back to this
while its listening connection is down.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from venturi.storage._types import TERMINAL_STATES, StoredJob

FIRST_DELAY_S = 0.002
MAX_DELAY_S = 0.25


def is_finished(job: StoredJob | None) -> bool:
    """Done waiting: the job ended (completed, dead, cancelled), or there is no such job."""
    return job is None or job.state in TERMINAL_STATES


def next_delay(delay: float) -> float:
    return min(delay * 2, MAX_DELAY_S)


def poll(read: Callable[[], StoredJob | None], timeout: float) -> StoredJob | None:
    """``read()`` until the job is finished or ``timeout`` seconds have passed; the last read."""
    deadline = time.monotonic() + timeout
    delay = FIRST_DELAY_S
    while True:
        job = read()
        remaining = deadline - time.monotonic()
        if is_finished(job) or remaining <= 0:
            return job
        time.sleep(min(delay, remaining))
        delay = next_delay(delay)


async def poll_async(
    read: Callable[[], Awaitable[StoredJob | None]], timeout: float
) -> StoredJob | None:
    """The asyncio twin of ``poll``."""
    import asyncio  # here: a sync producer (Queue on SQLite) never pays for loading asyncio

    deadline = time.monotonic() + timeout
    delay = FIRST_DELAY_S
    while True:
        job = await read()
        remaining = deadline - time.monotonic()
        if is_finished(job) or remaining <= 0:
            return job
        await asyncio.sleep(min(delay, remaining))
        delay = next_delay(delay)
