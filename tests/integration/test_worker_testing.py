"""``venturi.testing``: handler runs with a prepared context, producer assertions in memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from venturi import JobState, JournalEntry, JournalEvent, testing
from venturi.storage import Resolution
from venturi.worker import Context, Handler, Outcome, WorkerConfig

from tests.conformance.versioned_tasks import Count, CountCarry
from tests.integration.tasks import (
    Counter,
    Doomed,
    DoomedHandler,
    Echo,
    EchoHandler,
    Flaky,
    FlakyHandler,
    Patient,
    PatientHandler,
    Probe,
    Shout,
    Sleepy,
    SleepyHandler,
    Stepper,
    StepperHandler,
)

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def failures(n: int) -> tuple[JournalEntry, ...]:
    return tuple(
        JournalEntry(at=NOW, run=i + 1, event=JournalEvent.FAILED, error_code="error")
        for i in range(n)
    )


async def test_completed_run_with_output_note_and_attachment() -> None:
    result = await testing.run_handler(EchoHandler(), Echo("hi"), Probe())
    assert result.completed and result.resolution is Resolution.COMPLETED
    assert result.output == Shout("HI", 2)
    assert result.note == "shouted"
    assert result.attachment == {"chars": 2}
    assert result.error is None
    assert result.run_result.output == '{"length":2,"text":"HI"}'


async def test_prepared_history_carry_and_run_count() -> None:
    probe = Probe()
    result = await testing.run_handler(
        FlakyHandler(), Flaky(failures=3), probe, carry=Counter(4), run_count=3,
        history=failures(2), job_id="01HTESTJOB0000000000000000", now=NOW,
        config=WorkerConfig(jitter_fraction=0.0, install_signal_handlers=False),
    )  # fmt: skip
    assert probe.runs == [("01HTESTJOB0000000000000000", 3)]
    assert result.retried
    assert isinstance(result.error, ConnectionError)
    assert result.carry == Counter(5)
    assert result.attachment == {"attempt": 5, "failures_before": 2}
    # Flaky's own backoff: 10 ms * (fib(3) - 1) after the third failure.
    assert result.run_result.run_at == NOW + timedelta(milliseconds=10)


async def test_backstop_from_history() -> None:
    config = WorkerConfig(max_failures=3, install_signal_handlers=False)
    result = await testing.run_handler(
        FlakyHandler(), Flaky(failures=9), Probe(), history=failures(2), config=config
    )
    assert result.dead and result.error_code == "backstop_reached"


async def test_pause_and_permanent_failure() -> None:
    paused = await testing.run_handler(StepperHandler(), Stepper(steps=2), Probe(), carry=Counter(1))
    assert paused.paused and paused.carry == Counter(2) and paused.note == "step 2 of 2"
    dead = await testing.run_handler(DoomedHandler(), Doomed("gone"), Probe())
    assert dead.dead and dead.error_code == "resource_gone"


async def test_cancelled_run_sees_the_request() -> None:
    result = await testing.run_handler(
        PatientHandler(), Patient(seconds=30, checkpoint=True), Probe(), cancelled=True
    )
    assert result.paused and result.note == "checkpointed on cancel"


async def test_timeout_applies() -> None:
    result = await testing.run_handler(SleepyHandler(), Sleepy(ms=2000), Probe())
    assert result.retried and result.error_code == "timeout"


def test_sync_wrapper_and_wrong_task_type() -> None:
    assert testing.run_handler_sync(EchoHandler(), Echo("a"), Probe()).completed
    with pytest.raises(TypeError, match="runs Echo tasks, got Doomed"):
        testing.run_handler_sync(EchoHandler(), Doomed("x"), Probe())  # type: ignore[misc]


def test_producer_assertions_on_a_memory_queue() -> None:
    with testing.memory_queue() as queue:
        queue.enqueue(Echo("one"))
        queue.enqueue(Echo("two"))
        queue.enqueue(Doomed("x"))
        assert testing.enqueued(queue, Echo) == [Echo("one"), Echo("two")]
        assert testing.assert_enqueued(queue, Echo, Echo("two")) == [Echo("two")]
        testing.assert_enqueued(queue, Echo, {"text": "one"}, count=1)
        testing.assert_enqueued(queue, Echo, count=2, where=lambda t: t.text.startswith("t") or True)
        testing.assert_enqueued(queue, Doomed)
        with pytest.raises(AssertionError, match=r"expected exactly 3 'it_echo' job\(s\), found 2"):
            testing.assert_enqueued(queue, Echo, count=3)
        with pytest.raises(AssertionError, match="matching payload"):
            testing.assert_enqueued(queue, Echo, Echo("three"))
        with pytest.raises(AssertionError, match=r"found 0; all 0 'it_stepper'"):
            testing.assert_enqueued(queue, Stepper)


def test_memory_queues_are_private() -> None:
    with testing.memory_queue() as first, testing.memory_queue() as second:
        first.enqueue(Echo("only here"))
        assert testing.enqueued(second, Echo) == []


def test_drain_runs_a_real_worker_over_the_memory_queue() -> None:
    with testing.memory_queue() as queue:
        job_id = queue.enqueue(Echo("go")).job_id
        queue.enqueue(Doomed("no"))
        stats = testing.drain_sync(queue, [EchoHandler(), DoomedHandler()], Probe())
        assert stats.completed == 1 and stats.dead == 1
        info = queue.get(job_id, Echo)
        assert info.state is JobState.COMPLETED and info.output == Shout("GO", 2)
        assert [j.state for j in testing.jobs(queue, Doomed)] == [JobState.DEAD]
        assert testing.enqueued(queue, Echo, states=[JobState.PENDING]) == []


class CountHandler(Handler[Count, CountCarry, None]):
    TASK = Count

    async def handle(self, task: Count, ctx: Context[CountCarry], state: None) -> Outcome[None]:
        ctx.carry = CountCarry(ctx.carry.runs + 1)
        return Outcome.completed_with(task.key)


async def test_a_versioned_task_runs_at_its_own_version() -> None:
    # Count is version 2: run_handler stores it as the current code would, not as version 1.
    ran = await testing.run_handler(CountHandler(), Count("k"), None)
    assert ran.run_result.resolution is Resolution.COMPLETED
    assert ran.run_result.journal_entry.note == "k" and ran.carry == CountCarry(1)
