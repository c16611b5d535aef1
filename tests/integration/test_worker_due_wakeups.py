"""A worker wakes for the due times it knows, not a poll interval later.

A job paused for 100 ms, a retry 100 ms later and a job scheduled every second run
again within milliseconds of their due time although the worker polls only every
5 s: it noted when each was due (its own pause and retry results, its scheduler's
slots). The bounds are generous (seconds, against the 5 s poll each step would
otherwise wait) so that a slow machine cannot make them flake.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import JobState, Queue, Task, codec
from venturi.worker import Context, Handler, Outcome, Worker

from tests.integration._workers.support import eventually, fast_config, stop
from tests.integration.tasks import Counter, Flaky, FlakyHandler, Probe

POLL_S = 5.0
STEPS = 3


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


class ShortPauses(Task[Counter]):
    KIND: ClassVar[str] = "it_short_pauses"
    CARRY: ClassVar[type[Any]] = Counter

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        codec.expect_object(data, "$", required=frozenset(), allowed=frozenset())
        return cls()


class ShortPausesHandler(Handler[ShortPauses, Counter, Probe]):
    TASK = ShortPauses

    async def handle(self, task: ShortPauses, ctx: Context[Counter], state: Probe) -> Outcome[Any]:
        state.runs.append((ctx.job_id, ctx.run_count))
        if ctx.carry.n < STEPS:
            ctx.carry = Counter(ctx.carry.n + 1)
            return Outcome.pause_in_with(timedelta(milliseconds=100), f"step {ctx.carry.n}")
        return Outcome.completed()


async def _run_to_end(database: str, task: Task[Any], handler: Handler[Any, Any, Probe]) -> float:
    probe = Probe()
    with Queue(database) as queue:
        job_id = queue.enqueue(task).job_id
        worker = Worker(probe, database, config=fast_config(poll_interval=POLL_S))
        worker.register(handler)
        running = asyncio.create_task(worker.run())
        started = time.monotonic()
        try:
            await eventually(
                lambda: queue.get(job_id).state is JobState.COMPLETED, timeout=30, what="the job to end"
            )
        finally:
            await stop(worker, running)
        return time.monotonic() - started


async def test_a_short_pause_resumes_well_under_the_poll_interval(database: str) -> None:
    elapsed = await _run_to_end(database, ShortPauses(), ShortPausesHandler())
    # Three pauses of 100 ms: polling alone would take at least 3 x 5 s.
    assert elapsed < 3.0, f"{STEPS} pauses of 100 ms took {elapsed:.2f} s"


async def test_a_short_retry_runs_well_under_the_poll_interval(database: str) -> None:
    elapsed = await _run_to_end(database, Flaky(failures=3, base_ms=100), FlakyHandler())
    assert elapsed < 3.0, f"three retries (the third 90-100 ms after its failure) took {elapsed:.2f} s"
