"""What a worker claims, and how many at once: concurrency, keys, kinds, the reconciler."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from venturi import ConfigurationError, JobState, Queue
from venturi.storage.sqlite import AsyncSqliteStorage, SqliteStorage
from venturi.worker import Worker, WorkerConfig

from tests.integration._workers.support import FAST, eventually, make_worker, state_is, stop
from tests.integration.tasks import (
    Echo,
    EchoHandler,
    Flaky,
    FlakyHandler,
    Noop,
    NoopHandler,
    Orphan,
    Probe,
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


async def test_runs_exactly_concurrency_handlers_at_once(db: Path, queue: Queue) -> None:
    queue.enqueue_many(Sleepy(ms=60) for _ in range(24))
    probe = Probe()
    stats = await make_worker(db, [SleepyHandler], probe, concurrency=4).run_until_idle()
    assert stats.completed == 24
    assert probe.max_running == 4  # never more, and the worker did fill every slot
    assert probe.running == 0


async def test_one_at_a_time_with_concurrency_one(db: Path, queue: Queue) -> None:
    queue.enqueue_many(Sleepy(ms=10) for _ in range(5))
    probe = Probe()
    await make_worker(db, [SleepyHandler], probe, concurrency=1, prefetch=0).run_until_idle()
    assert probe.max_running == 1 and len(probe.runs) == 5


async def test_concurrency_key_serializes_its_jobs(db: Path, queue: Queue) -> None:
    queue.enqueue_many(
        [Sleepy(ms=30, key="account-1") for _ in range(5)]
        + [Sleepy(ms=30, key="account-2") for _ in range(5)]
        + [Sleepy(ms=30) for _ in range(5)]
    )
    probe = Probe()
    worker = make_worker(db, [SleepyHandler], probe, concurrency=8)
    task = asyncio.create_task(worker.run())
    await eventually(lambda: len(probe.runs) == 15 and probe.running == 0, what="15 runs")
    stats = await stop(worker, task)
    assert stats.completed == 15
    assert probe.max_running_by_key == {"account-1": 1, "account-2": 1}
    assert probe.max_running > 2  # unkeyed jobs and the two keys still ran side by side


async def test_jobs_of_unregistered_kinds_wait_and_are_reported(
    db: Path, queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    orphans = [r.job_id for r in queue.enqueue_many([Orphan(1), Orphan(2)])]
    # In a queue this worker does not serve: another worker's business, not reported.
    queue.enqueue(Orphan(3), queue="elsewhere")
    echo = queue.enqueue(Echo("x")).job_id
    caplog.set_level(logging.WARNING, logger="venturi.worker")
    stats = await make_worker(db, [EchoHandler]).run_until_idle()
    assert stats.completed == 1
    assert queue.get(echo).state is JobState.COMPLETED
    for job_id in orphans:
        info = queue.get(job_id)
        assert info.state is JobState.PENDING and info.run_count == 0
    (record,) = [r for r in caplog.records if getattr(r, "event", None) == "unknown_kinds"]
    assert record.kinds == {"it_orphan": 2}  # type: ignore[attr-defined]
    assert "it_orphan (2)" in record.getMessage()


async def test_duplicate_and_reserved_kinds_and_no_handlers_fail_before_running(db: Path) -> None:
    worker: Worker[Probe] = Worker(Probe(), str(db))
    with pytest.raises(ConfigurationError, match="no handlers"):
        await worker.run()
    worker.register(EchoHandler())
    with pytest.raises(ConfigurationError, match="'it_echo' is registered twice"):
        worker.register(EchoHandler())
    assert not db.exists()  # nothing was opened


async def test_reconciler_runs_before_every_claim_and_its_errors_do_not_stop_the_worker(
    db: Path, queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    order: list[str] = []
    repaired: list[str] = []

    async def reconcile() -> None:
        order.append("reconcile")
        if len(order) == 1:
            raise RuntimeError("admission scan failed")
        if not repaired:  # the gap it repairs: a job that should exist but was never enqueued
            repaired.append(queue.enqueue(Noop(7)).job_id)

    caplog.set_level(logging.ERROR, logger="venturi.worker")
    worker = make_worker(db, [NoopHandler], reconciler=reconcile)
    task = asyncio.create_task(worker.run())
    await eventually(lambda: repaired and queue.get(repaired[0]).state is JobState.COMPLETED)
    await eventually(lambda: order.count("reconcile") >= 4, what="several cycles")
    await stop(worker, task)
    assert order[0] == "reconcile"
    (record,) = [r for r in caplog.records if getattr(r, "event", None) == "reconciler_error"]
    assert record.exc_info is not None and "admission scan failed" in str(record.exc_info[1])


async def test_a_sync_reconciler_precedes_each_claim(db: Path, queue: Queue) -> None:
    queue.enqueue_many(Noop(i) for i in range(25))
    order: list[str] = []
    storage = AsyncSqliteStorage(SqliteStorage(str(db)))
    claim = storage.claim

    async def traced_claim(request: Any, *, now: Any) -> Any:
        order.append("claim")
        return await claim(request, now=now)

    storage.claim = traced_claim  # type: ignore[method-assign]
    config = WorkerConfig(**{**FAST, "claim_batch": 10, "reconciler": lambda: order.append("reconcile")})
    worker: Worker[None] = Worker(None, storage, config=config)
    worker.register(NoopHandler())
    stats = await worker.run_until_idle()
    await storage.close()
    assert stats.completed == 25
    assert order.count("claim") >= 3
    assert order == ["reconcile", "claim"] * order.count("claim")


async def test_work_made_ready_by_a_run_is_claimed_without_waiting_for_the_poll(
    db: Path, queue: Queue
) -> None:
    # A long poll interval: only the worker's own wake-ups can make this fast.
    stepper = queue.enqueue(Stepper(steps=5, delay_ms=30)).job_id  # zero pauses after a while
    flaky = queue.enqueue(Flaky(failures=2)).job_id  # two immediate retries
    keyed = [r.job_id for r in queue.enqueue_many([Sleepy(ms=20, key="k"), Sleepy(ms=20, key="k")])]
    # Quick jobs end while the stepper still runs: the claimer finds nothing, and must
    # still notice when the stepper's pause makes it ready again.
    queue.enqueue_many(Sleepy(ms=1) for _ in range(3))
    worker = make_worker(
        db, [StepperHandler, FlakyHandler, SleepyHandler], concurrency=3, poll_interval=5.0
    )
    started = time.monotonic()
    task = asyncio.create_task(worker.run())
    for job_id in (stepper, flaky, *keyed):
        await eventually(state_is(queue, job_id, JobState.COMPLETED), timeout=4, what=job_id)
    elapsed = time.monotonic() - started
    await stop(worker, task)
    assert elapsed < 2.5, f"took {elapsed:.2f} s: the claimer waited for its poll interval"
