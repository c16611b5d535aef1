"""``venturi.testing``'s real worker over a test's database: ``drain`` until no job is
ready, ``run_until_complete`` until no job is pending, on a ``FakeClock`` the test
controls (re-exported by ``venturi.testing``; see there)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from typing import Any

from venturi._clock import use_clock
from venturi._queue import Queue
from venturi.errors import ConfigurationError
from venturi.storage._admin_types import JobFilter
from venturi.storage._types import JobState
from venturi.worker._config import WorkerConfig
from venturi.worker._handler import Handler
from venturi.worker._stats import WorkerStats
from venturi.worker._worker import Worker


async def drain(
    queue: Queue,
    handlers: Iterable[Handler[Any, Any, Any]],
    state: Any = None,
    *,
    config: WorkerConfig | None = None,
) -> WorkerStats:
    """Run a worker with ``handlers`` over ``queue``'s database until no ready job is left.

    Works with ``memory_queue()`` (the worker shares its connection) and with
    any SQLite-file ``Queue``.
    """
    from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage

    storage = queue.storage
    if not isinstance(storage, SqliteStorage):
        raise TypeError("drain() runs over a SQLite Queue (memory_queue() or a file)")
    config = config if config is not None else WorkerConfig(install_signal_handlers=False)
    worker: Worker[Any] = Worker(state, AsyncSqliteStorage(storage), config=config, migrate=False)
    for handler in handlers:
        worker.register(handler)
    return await worker.run_until_idle()


def drain_sync(
    queue: Queue,
    handlers: Iterable[Handler[Any, Any, Any]],
    state: Any = None,
    *,
    config: WorkerConfig | None = None,
) -> WorkerStats:
    return asyncio.run(drain(queue, handlers, state, config=config))


# -- past pauses and delays, on a clock the test controls --------------------------------


class FakeClock:
    """A clock that moves only when told: ``now`` (aware UTC), ``advance``, ``advance_to``.

    Given to ``run_until_complete``, it is the time of the worker (claims, pauses,
    retries, leases) and of every ``Queue`` of the process while that runs."""

    def __init__(self, now: datetime | None = None) -> None:
        if now is not None and now.utcoffset() is None:
            raise ConfigurationError(
                "FakeClock needs a timezone-aware datetime, e.g. datetime(..., tzinfo=UTC)"
            )
        self.now = (now or datetime.now(UTC)).astimezone(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta

    def advance_to(self, moment: datetime) -> None:
        """Move to ``moment`` if it is later (a clock never goes back)."""
        if moment > self.now:
            self.now = moment.astimezone(UTC)


#: Rounds (a worker run, then a move of the clock) before run_until_complete gives up.
MOST_ROUNDS = 10_000


async def run_until_complete(
    queue: Queue,
    handlers: Iterable[Handler[Any, Any, Any]],
    state: Any = None,
    *,
    clock: FakeClock | None = None,
    config: WorkerConfig | None = None,
    max_rounds: int = MOST_ROUNDS,
) -> WorkerStats:
    """Run a worker over ``queue``'s database until no job is pending: paused, retried and
    delayed jobs included, without waiting for them.

    Each round runs the worker until no job is ready at ``clock.now`` (``drain``), then
    moves the clock to the earliest due time of a pending job. The clock stands still
    while a round runs, so a pause of an hour costs what a pause of zero does. While this
    runs, the process's venturi time (``Queue`` included) is ``clock``'s; afterwards the
    system clock again. Raises ``AssertionError`` when jobs are still pending after
    ``max_rounds`` rounds (a job that pauses forever). Returns the summed ``WorkerStats``.
    """
    clock = clock if clock is not None else FakeClock()
    handlers = list(handlers)
    total = WorkerStats()
    previous = use_clock(clock)
    try:
        for _ in range(max_rounds):
            _add(total, await drain(queue, handlers, state, config=config))
            due = _next_due(queue)
            if due is None:
                return total
            clock.advance_to(due)
    finally:
        use_clock(previous)
    raise AssertionError(
        f"jobs still pending after {max_rounds} rounds (the clock at {clock.now.isoformat()}): "
        "a job that never ends? Raise max_rounds, or look at queue.get(job_id).journal"
    )


def run_until_complete_sync(
    queue: Queue,
    handlers: Iterable[Handler[Any, Any, Any]],
    state: Any = None,
    *,
    clock: FakeClock | None = None,
    config: WorkerConfig | None = None,
    max_rounds: int = MOST_ROUNDS,
) -> WorkerStats:
    return asyncio.run(
        run_until_complete(
            queue, handlers, state, clock=clock, config=config, max_rounds=max_rounds
        )
    )


def _next_due(queue: Queue) -> datetime | None:
    """The earliest run time of a pending job, or None when none is pending."""
    earliest: datetime | None = None
    before: str | None = None
    while True:
        page = queue.storage.list_jobs(
            JobFilter(states=(JobState.PENDING,), limit=1000, before_id=before)
        )
        for job in page:
            if earliest is None or job.run_at < earliest:
                earliest = job.run_at
        if len(page) < 1000:
            return earliest
        before = page[-1].id


def _add(total: WorkerStats, more: WorkerStats) -> None:
    for field in fields(WorkerStats):
        setattr(total, field.name, getattr(total, field.name) + getattr(more, field.name))
