"""``venturi.testing.run_until_complete``: paused, retried and delayed jobs run to their
end on a ``FakeClock``, without waiting in real time."""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Self

import pytest
from venturi import JobState, JournalEvent, Task, codec
from venturi._clock import utcnow
from venturi.errors import ConfigurationError
from venturi.testing import FakeClock, memory_queue, run_until_complete, run_until_complete_sync
from venturi.worker import Context, Handler, Outcome

from tests.integration.tasks import Counter, Flaky, FlakyHandler, Probe

START = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


class HourlySteps(Task[Counter]):
    KIND: ClassVar[str] = "it_hourly_steps"
    CARRY: ClassVar[type[Any]] = Counter

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def to_json(self) -> Any:
        return {"steps": self.steps}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"steps"}), allowed=frozenset({"steps"}))
        return cls(codec.expect_int(obj["steps"], "$.steps"))


class HourlyStepsHandler(Handler[HourlySteps, Counter, list[datetime]]):
    TASK = HourlySteps

    async def handle(self, task: HourlySteps, ctx: Context[Counter], state: list[datetime]) -> Outcome[Any]:
        state.append(utcnow())  # the time the run sees: the test's clock
        if ctx.carry.n < task.steps:
            ctx.carry = Counter(ctx.carry.n + 1)
            return Outcome.pause_in_with(timedelta(hours=1), f"step {ctx.carry.n}")
        return Outcome.completed()


def test_hourly_pauses_run_to_the_end_in_milliseconds() -> None:
    queue = memory_queue()
    clock = FakeClock(START)
    job_id = queue.enqueue(HourlySteps(3)).job_id
    seen: list[datetime] = []
    started = time.monotonic()
    stats = run_until_complete_sync(queue, [HourlyStepsHandler()], seen, clock=clock)
    assert time.monotonic() - started < 10  # three hours of pauses, not waited for
    assert (stats.paused, stats.completed) == (3, 1)
    job = queue.get(job_id)
    assert job.state is JobState.COMPLETED
    assert [e.event for e in job.journal] == [JournalEvent.PAUSED] * 3 + [JournalEvent.COMPLETED]
    # Each run happened an hour (of the test's clock) after the one before.
    assert [b - a for a, b in itertools.pairwise(seen)] == [timedelta(hours=1)] * 3
    assert clock.now == seen[-1] and clock.now >= START + timedelta(hours=3)
    assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=5)  # the system clock is back


async def test_delayed_jobs_and_retries_complete_too() -> None:
    queue = memory_queue()
    clock = FakeClock()
    later = queue.enqueue(Flaky(failures=0), delay=timedelta(days=2)).job_id
    flaky = queue.enqueue(Flaky(failures=4, base_ms=60_000)).job_id  # retries a minute apart and more
    stats = await run_until_complete(queue, [FlakyHandler()], Probe(), clock=clock)
    assert stats.retried == 4 and stats.completed == 2
    assert queue.get(later).state is JobState.COMPLETED
    assert queue.get(flaky).state is JobState.COMPLETED
    assert clock.now >= queue.get(later).run_at  # moved two days on, instantly


class Forever(Task[Any]):
    KIND: ClassVar[str] = "it_forever"

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


class ForeverHandler(Handler[Forever, Any, None]):
    TASK = Forever

    async def handle(self, task: Forever, ctx: Context[Any], state: None) -> Outcome[Any]:
        return Outcome.pause_in_with(timedelta(minutes=5), "again")


def test_a_job_that_never_ends_fails_after_max_rounds() -> None:
    queue = memory_queue()
    queue.enqueue(Forever())
    with pytest.raises(AssertionError, match="still pending after 5 rounds"):
        run_until_complete_sync(queue, [ForeverHandler()], None, max_rounds=5)
    assert abs(utcnow() - datetime.now(UTC)) < timedelta(seconds=5)


def test_a_naive_start_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        FakeClock(datetime(2030, 1, 1))
