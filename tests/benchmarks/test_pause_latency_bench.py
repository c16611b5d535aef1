"""Pause-to-resume latency: how late a job paused for 100 ms runs again.

One worker, one job that pauses ``STEPS`` times with ``Outcome.pause_in_with(100 ms)``,
at the worker's default ``poll_interval`` (1 s). Each gap between two runs of the job
minus the 100 ms it asked for is one resume latency; the benchmark prints their median
and maximum on SQLite and on PostgreSQL. No timing assertion (figures depend on the
machine); it asserts only that the job completed after every step.

    .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_pause_latency_bench.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import JobState, Queue, Task, codec
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig

from tests.integration.tasks import Counter

pytestmark = pytest.mark.benchmark

STEPS = 8
PAUSE = timedelta(milliseconds=100)


@dataclass
class Starts:
    at: list[float] = field(default_factory=list)  # time.monotonic() of each run's start


@dataclass(frozen=True, slots=True)
class PauseSteps(Task[Counter]):
    KIND: ClassVar[str] = "bench_pause_steps"
    CARRY: ClassVar[type[Any]] = Counter
    steps: int

    def to_json(self) -> Any:
        return {"steps": self.steps}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"steps"}), allowed=frozenset({"steps"}))
        return cls(codec.expect_int(obj["steps"], "$.steps"))


class PauseStepsHandler(Handler[PauseSteps, Counter, Starts]):
    TASK = PauseSteps

    async def handle(self, task: PauseSteps, ctx: Context[Counter], state: Starts) -> Outcome[Any]:
        state.at.append(time.monotonic())
        if ctx.carry.n < task.steps:
            ctx.carry = Counter(ctx.carry.n + 1)
            return Outcome.pause_in_with(PAUSE, f"step {ctx.carry.n}")
        return Outcome.completed()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


async def test_pause_to_resume_latency(database: str) -> None:
    starts = Starts()
    with Queue(database) as queue:
        job_id = queue.enqueue(PauseSteps(STEPS)).job_id
        config = WorkerConfig(install_signal_handlers=False)  # the default poll interval, 1 s
        worker = Worker(starts, database, config=config).register(PauseStepsHandler())
        running = asyncio.create_task(worker.run())
        await _stop_when_done(queue, job_id, worker)
        await running
        assert queue.get(job_id).state is JobState.COMPLETED
    assert len(starts.at) == STEPS + 1
    late = [(b - a) * 1000 - PAUSE.total_seconds() * 1000 for a, b in zip(starts.at, starts.at[1:], strict=False)]
    backend = database.split(":", 1)[0]
    print(
        f"\npause-to-resume latency, {backend}, pause 100 ms, poll_interval 1 s, {STEPS} resumes: "
        f"median {statistics.median(late):.1f} ms, max {max(late):.1f} ms late"
    )


async def _stop_when_done(queue: Queue, job_id: str, worker: Worker[Any]) -> None:
    deadline = time.monotonic() + 60
    while queue.get(job_id).state is not JobState.COMPLETED and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    worker.request_shutdown()
