"""A worker whose jobs wait for their rate limit wakes when the next slot frees, not after
its poll interval: with a poll of 60 s, jobs limited to 2 a second still run 2 a second."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

from venturi import Queue, RateLimit, Task, codec
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig


@dataclass(frozen=True, slots=True)
class TwoASecond(Task[Any]):
    KIND: ClassVar[str] = "it_two_a_second"
    RATE_LIMIT: ClassVar[RateLimit | None] = RateLimit(max=2, per=timedelta(seconds=1))
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"n"}), allowed=frozenset({"n"}))
        return cls(codec.expect_int(obj["n"], "$.n"))


class Recorder(Handler[TwoASecond, Any, list[float]]):
    TASK = TwoASecond

    async def handle(self, task: TwoASecond, ctx: Context[Any], state: list[float]) -> Outcome[None]:
        state.append(time.monotonic())
        return Outcome.completed()


async def test_the_worker_sleeps_until_the_next_slot(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    with Queue(url) as queue:
        queue.enqueue_many([TwoASecond(n=n) for n in range(6)])
    starts: list[float] = []
    config = WorkerConfig(poll_interval=timedelta(seconds=60), install_signal_handlers=False)
    worker = Worker(starts, url, config=config).register(Recorder())
    began = time.monotonic()
    stats = await asyncio.wait_for(worker.run_until_idle(), timeout=30)
    # Three windows of two: about 2 s, where a poll of 60 s would have taken two minutes.
    assert stats.completed == 6
    assert time.monotonic() - began < 10
    ordered = sorted(starts)
    assert all(later - earlier >= 0.95 for earlier, later in zip(ordered, ordered[2:], strict=False))
