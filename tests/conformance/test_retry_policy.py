"""A task's own retry policy on a real worker: its backstop and its curve, every backend.

Two tasks fail on every run on one worker whose backstop is ten: ``Charge`` says
``MAX_FAILURES = 3`` and is dead after its third failure, while ``Resync``, with
the worker's backstop, keeps being retried past three and completes on its sixth run.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import Backoff, Growth, JobState, JournalEvent, Queue, Task
from venturi.worker import Context, FailureCode, Handler, Outcome, Worker, WorkerConfig

from tests.conformance.backends import Backend


@dataclass(frozen=True)
class Charge(Task[Any]):
    KIND: ClassVar[str] = "conformance.retry.charge"
    MAX_FAILURES: ClassVar[int | None] = 3
    GROWTH: ClassVar[Growth | None] = Growth.LINEAR

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


@dataclass(frozen=True)
class Resync(Task[Any]):
    KIND: ClassVar[str] = "conformance.retry.resync"

    def to_json(self) -> Any:
        return {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls()


class ChargeHandler(Handler[Charge, Any, None]):
    TASK = Charge

    async def handle(self, task: Charge, ctx: Context[Any], state: None) -> Outcome[None]:
        raise RuntimeError(f"card declined (run {ctx.run_count})")


class ResyncHandler(Handler[Resync, Any, None]):
    TASK = Resync

    async def handle(self, task: Resync, ctx: Context[Any], state: None) -> Outcome[None]:
        if ctx.failure_count < 5:
            raise RuntimeError(f"ledger busy (run {ctx.run_count})")
        return Outcome.completed_with(f"synced after {ctx.failure_count} failures")


async def test_a_tasks_own_backstop_beside_one_that_keeps_retrying(backend: Backend) -> None:
    queue = Queue(backend.sync, migrate=False)
    charge = queue.enqueue(Charge()).job_id
    resync = queue.enqueue(Resync()).job_id
    config = WorkerConfig(
        install_signal_handlers=False,
        poll_interval=timedelta(milliseconds=10),
        # Delays of a few milliseconds: the test waits for real retries, not for minutes.
        backoff=Backoff(base=timedelta(milliseconds=1), cap=timedelta(milliseconds=5)),
        max_failures=10,
    )
    worker: Worker[None] = Worker(None, backend.storage, config=config, migrate=False)
    worker.register(ChargeHandler())
    worker.register(ResyncHandler())
    for _ in range(50):  # each pass runs what is due; a retry a few ms out waits for the next
        await worker.run_until_idle()
        if queue.get(resync).state is JobState.COMPLETED:
            break
        await asyncio.sleep(0.01)

    dead = queue.get(charge)
    assert dead.state is JobState.DEAD
    assert (dead.run_count, dead.failure_count) == (3, 3)
    assert dead.error_code == FailureCode.BACKSTOP_REACHED.value
    assert dead.error_message == "RuntimeError: card declined (run 3)"
    events = [e.event for e in dead.journal]
    assert events == [JournalEvent.FAILED, JournalEvent.FAILED, JournalEvent.DEAD]
    assert "max_failures=3" in (dead.journal[-1].note or "")

    done = queue.get(resync)
    assert done.state is JobState.COMPLETED
    assert (done.run_count, done.failure_count) == (6, 5)
    assert done.journal[-1].note == "synced after 5 failures"
