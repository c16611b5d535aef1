"""A worker on a real SQLite file: outcomes, retries, the backstop, timeouts, retention."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from venturi import JobNotFound, JobState, JournalEvent, Queue

from tests.integration._workers.support import eventually, make_worker, state_is, stop
from tests.integration.tasks import (
    Doomed,
    DoomedHandler,
    Echo,
    EchoHandler,
    Flaky,
    FlakyHandler,
    Fleeting,
    FleetingHandler,
    Hopeless,
    HopelessHandler,
    Probe,
    Shout,
    Sleepy,
    SleepyHandler,
    Stepper,
    StepperHandler,
)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "jobs.db"


@pytest.fixture
def queue(db: Path) -> Iterator[Queue]:
    with Queue(str(db)) as q:
        yield q


async def test_full_lifecycle_with_typed_output(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Echo("hello")).job_id
    assert queue.get(job_id).state is JobState.PENDING
    probe = Probe()
    stats = await make_worker(db, [EchoHandler], probe).run_until_idle()
    assert stats.completed == 1 and stats.claimed == 1
    info = queue.get(job_id, Echo)
    assert info.state is JobState.COMPLETED
    assert info.has_output
    assert info.output == Shout("HELLO", 5)
    assert info.payload == Echo("hello")
    assert info.run_count == 1 and info.failure_count == 0
    assert info.finished_at is not None
    (entry,) = info.journal
    assert entry.event is JournalEvent.COMPLETED
    assert entry.run == 1
    assert entry.note == "shouted"
    assert entry.attachment == {"chars": 5}
    assert probe.runs == [(job_id, 1)]


async def test_retries_with_backoff_then_success(db: Path, queue: Queue) -> None:
    # Flaky's own backoff: base 40 ms -> delays 0, 0, 40 ms, 80 ms after failures 1..4.
    job_id = queue.enqueue(Flaky(failures=4, base_ms=40)).job_id
    worker = make_worker(db, [FlakyHandler], jitter_fraction=0.0)
    task = asyncio.create_task(worker.run())
    info = await eventually(state_is(queue, job_id, JobState.COMPLETED), what="completion")
    stats = await stop(worker, task)
    assert stats.retried == 4 and stats.completed == 1
    assert info.run_count == 5 and info.failure_count == 4
    # Persisted at each of the 4 retries, and by the completion: the carry its last run left.
    assert info.carry.n == 5
    events = [entry.event for entry in info.journal]
    assert events == [JournalEvent.FAILED] * 4 + [JournalEvent.COMPLETED]
    failed = info.journal[:4]
    assert [entry.error_code for entry in failed] == ["error"] * 4
    assert failed[0].error_message == "ConnectionError: flaky failure 1"
    assert [entry.attachment["attempt"] for entry in info.journal] == [1, 2, 3, 4, 5]
    # The schedule: gaps before runs 4 and 5 are at least the Fibonacci delays.
    gaps = [b.at - a.at for a, b in zip(info.journal, info.journal[1:], strict=False)]
    assert gaps[2] >= timedelta(milliseconds=40)
    assert gaps[3] >= timedelta(milliseconds=80)
    assert info.journal[-1].note == "succeeded after 4 failures"


async def test_permanent_error_goes_dead_at_once(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Doomed("410 Gone")).job_id
    stats = await make_worker(db, [DoomedHandler]).run_until_idle()
    assert stats.dead == 1
    info = queue.get(job_id)
    assert info.state is JobState.DEAD
    assert info.error_code == "resource_gone" and info.error_message == "410 Gone"
    assert info.run_count == 1 and info.failure_count == 1
    (entry,) = info.journal
    assert entry.event is JournalEvent.DEAD
    assert entry.attachment == {"reason_length": 8}


async def test_pauses_persist_carry_and_never_consume_the_backstop(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Stepper(steps=6)).job_id
    stats = await make_worker(db, [StepperHandler], max_failures=2).run_until_idle()
    assert stats.paused == 6 and stats.completed == 1
    info = queue.get(job_id)
    assert info.state is JobState.COMPLETED
    assert info.run_count == 7 and info.failure_count == 0
    assert info.carry.n == 6
    assert [e.note for e in info.journal[:3]] == ["step 1 of 6", "step 2 of 6", "step 3 of 6"]
    assert [e.event for e in info.journal] == [JournalEvent.PAUSED] * 6 + [JournalEvent.COMPLETED]


async def test_backstop_reached_goes_dead(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Hopeless()).job_id
    worker = make_worker(db, [HopelessHandler], max_failures=3)
    task = asyncio.create_task(worker.run())
    info = await eventually(state_is(queue, job_id, JobState.DEAD), what="dead")
    await stop(worker, task)
    assert info.run_count == 3 and info.failure_count == 3
    assert info.error_code == "backstop_reached"
    assert info.error_message == "upstream still down (run 3)"
    assert [e.event for e in info.journal] == [JournalEvent.FAILED, JournalEvent.FAILED, JournalEvent.DEAD]
    assert [e.error_code for e in info.journal[:2]] == ["upstream_down", "upstream_down"]
    assert "max_failures=3" in (info.journal[-1].note or "")


async def test_timeout_is_a_retryable_failure(db: Path, queue: Queue) -> None:
    job_id = queue.enqueue(Sleepy(ms=5_000)).job_id  # TIMEOUT is 200 ms
    worker = make_worker(db, [SleepyHandler], max_failures=2)
    task = asyncio.create_task(worker.run())
    info = await eventually(state_is(queue, job_id, JobState.DEAD), what="dead")
    await stop(worker, task)
    first, last = info.journal
    assert first.event is JournalEvent.FAILED
    assert first.error_code == "timeout"
    assert "timeout of 0.2 s" in (first.error_message or "")
    assert last.error_code == "backstop_reached"
    assert first.at < last.at


async def test_retention_prunes_finished_jobs(db: Path, queue: Queue) -> None:
    gone = queue.enqueue(Fleeting()).job_id  # RETENTION = 0
    kept = queue.enqueue(Echo("stay")).job_id  # the worker's default retention (7 days)
    worker = make_worker(db, [FleetingHandler, EchoHandler])
    task = asyncio.create_task(worker.run())

    def pruned() -> bool:
        try:
            queue.get(gone)
        except JobNotFound:
            return True
        return False

    await eventually(pruned, what="pruning")
    stats = await stop(worker, task)
    assert stats.pruned >= 1
    assert queue.get(kept).state is JobState.COMPLETED


async def test_shutdown_requested_before_start_and_a_second_run(db: Path, queue: Queue) -> None:
    queue.enqueue(Echo("waits"))
    worker = make_worker(db, [EchoHandler])
    worker.request_shutdown()
    stats = await asyncio.wait_for(worker.run(), 5)
    assert stats.claimed == 0
    task = asyncio.create_task(worker.run())
    await eventually(lambda: worker.stats.completed == 1, what="completion")
    with pytest.raises(RuntimeError, match="already running"):
        await worker.run()
    with pytest.raises(RuntimeError, match="cannot change the database"):
        worker.database = "other.db"
    await stop(worker, task)


async def test_the_applications_signal_handlers_are_back_after_the_run(db: Path) -> None:
    # The loop's own removal would leave the default action (SIGTERM kills at once);
    # an embedding application, or `venturi worker` on its way out, needs its own back.
    import signal

    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    before = signal.signal(signal.SIGTERM, mine)
    try:
        worker = make_worker(db, [SleepyHandler], install_signal_handlers=True)
        task = asyncio.create_task(worker.run())
        await asyncio.sleep(0.2)
        assert signal.getsignal(signal.SIGTERM) is not mine  # the worker's, while it runs
        await stop(worker, task)
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)
