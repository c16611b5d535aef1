"""Sync handlers (``def handle``) on every backend: they block their own thread only.

While one blocks in ``time.sleep`` the worker keeps claiming and running other jobs and
keeps its lease alive with heartbeats; cancellation reaches it through ``ctx.is_cancelled()``;
a timeout fails the run at once although its thread cannot be stopped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Self

from venturi import AsyncQueue, JobState, JournalEvent, NoCarry, Task, codec
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig

from tests.conformance.backends import Backend

BLOCK_S = 1.5
LEASE_S = 0.6


@dataclass(frozen=True)
class Block(Task[NoCarry]):
    KIND: ClassVar[str] = "conformance.sync.block"
    seconds: float

    def to_json(self) -> Any:
        return {"seconds": self.seconds}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"seconds"}), allowed=frozenset({"seconds"}))
        return cls(codec.expect_float(obj["seconds"], "$.seconds"))


@dataclass(frozen=True)
class Slow(Block):
    KIND: ClassVar[str] = "conformance.sync.slow"
    TIMEOUT: ClassVar[timedelta | None] = timedelta(seconds=0.3)


@dataclass(frozen=True)
class Tick(Task[NoCarry]):
    KIND: ClassVar[str] = "conformance.sync.tick"
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


@dataclass
class Seen:
    block_thread: str = ""
    block_ended: float = 0.0
    ticks_done: list[float] = field(default_factory=list)
    cancel_seen: threading.Event = field(default_factory=threading.Event)
    slow_returned: threading.Event = field(default_factory=threading.Event)


class BlockHandler(Handler[Block, NoCarry, Seen]):
    TASK = Block

    def handle(self, task: Block, ctx: Context[NoCarry], state: Seen) -> Outcome[None]:
        state.block_thread = threading.current_thread().name
        deadline = time.monotonic() + task.seconds
        while time.monotonic() < deadline:  # blocking code, as a sync SDK call would be
            if ctx.is_cancelled():
                state.cancel_seen.set()
                return Outcome.pause_in_with(timedelta(0), "stopped on cancel")
            time.sleep(0.02)
        state.block_ended = time.monotonic()
        return Outcome.completed_with(f"blocked {task.seconds:g} s")


class SlowHandler(Handler[Slow, NoCarry, Seen]):
    TASK = Slow

    def handle(self, task: Slow, ctx: Context[NoCarry], state: Seen) -> Outcome[None]:
        time.sleep(task.seconds)  # ignores cancellation: its thread cannot be stopped
        state.slow_returned.set()
        return Outcome.completed()


class TickHandler(Handler[Tick, NoCarry, Seen]):
    TASK = Tick

    async def handle(self, task: Tick, ctx: Context[NoCarry], state: Seen) -> Outcome[None]:
        await asyncio.sleep(0.01)
        state.ticks_done.append(time.monotonic())
        return Outcome.completed()


def _worker(backend: Backend, seen: Seen, **config: Any) -> Worker[Seen]:
    settings: dict[str, Any] = {
        "concurrency": 4, "lease_duration": LEASE_S, "heartbeat_interval": 0.15,
        "poll_interval": 0.05, "drain_timeout": 2.0, "install_signal_handlers": False,
        "claim_batch": 4,
    }  # fmt: skip
    settings.update(config)
    worker = Worker(seen, backend.storage, config=WorkerConfig(**settings), migrate=False)
    for handler in (BlockHandler(), SlowHandler(), TickHandler()):
        worker.register(handler)
    return worker


async def test_a_blocking_sync_handler_leaves_claims_and_heartbeats_running(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage, migrate=False)
    blocked = (await queue.enqueue(Block(BLOCK_S))).job_id
    results = await queue.enqueue_many([Tick(n) for n in range(20)])
    ticks = [r.job_id for r in results]
    seen = Seen()
    stats = await _worker(backend, seen).run_until_idle()
    assert stats.completed == 21 and stats.retried == stats.dead == 0
    # It ran on the worker's thread pool, not on the loop's thread...
    assert seen.block_thread.startswith("venturi-handler")
    # ...so the other jobs were claimed and run while it blocked,
    assert len(seen.ticks_done) == 20 and max(seen.ticks_done) < seen.block_ended
    # and its lease (0.6 s) was kept alive by heartbeats through the 1.5 s it blocked.
    info = await queue.get(blocked)
    assert (info.state, info.run_count, info.failure_count) == (JobState.COMPLETED, 1, 0)
    assert [e.event for e in info.journal] == [JournalEvent.COMPLETED]
    assert [(await queue.get(job_id)).state for job_id in ticks] == [JobState.COMPLETED] * 20


async def test_shutdown_reaches_a_sync_handler_through_is_cancelled(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage, migrate=False)
    job_id = (await queue.enqueue(Block(30))).job_id
    seen = Seen()
    worker = _worker(backend, seen)
    running = asyncio.create_task(worker.run())
    info = await queue.get(job_id)
    while info.state is not JobState.RUNNING or not seen.block_thread:
        await asyncio.sleep(0.02)
        info = await queue.get(job_id)
    started = time.monotonic()
    worker.request_shutdown()
    stats = await running
    assert time.monotonic() - started < 1.5  # it saw the request, well before the drain timeout
    assert seen.cancel_seen.is_set() and stats.paused == 1
    info = await queue.get(job_id)
    assert (info.state, info.failure_count) == (JobState.PENDING, 0)
    assert info.journal[-1].note == "stopped on cancel"


async def test_a_sync_handler_past_its_timeout_fails_at_once(backend: Backend) -> None:
    queue = AsyncQueue(backend.storage, migrate=False)
    job_id = (await queue.enqueue(Slow(1.0))).job_id
    seen = Seen()
    started = time.monotonic()
    stats = await _worker(backend, seen, max_failures=1).run_until_idle()
    # The run failed when its 0.3 s were up, not when the thread returned 1 s in.
    assert stats.dead == 1 and time.monotonic() - started < 1.0
    info = await queue.get(job_id)
    assert info.state is JobState.DEAD and info.journal[-1].error_code == "backstop_reached"
    assert "timeout" in (info.journal[-1].note or "")
    # The thread ran on to its end; what it returned was dropped.
    assert await asyncio.to_thread(seen.slow_returned.wait, 5)
    assert (await queue.get(job_id)).state is JobState.DEAD
