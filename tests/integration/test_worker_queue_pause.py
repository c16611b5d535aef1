"""A paused queue, as workers see it: nothing claimed from it while another queue keeps
running, its running jobs finish, enqueueing still works, and a resume picks it up again.

Runs on SQLite and on PostgreSQL, the pause made by a separate ``Queue`` (an operator's
process would do the same) while the worker runs.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import JobState, Queue, Task, codec
from venturi.worker import Context, Handler, Outcome, Worker

from tests.integration._workers.support import eventually, fast_config, stop

POLL = 0.2


@dataclass
class Seen:
    runs: list[tuple[str, int]] = field(default_factory=list)  # (queue, n)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    holding: int = 0


@dataclass(frozen=True, slots=True)
class Mail(Task[Any]):
    KIND: ClassVar[str] = "it_pause_mail"
    n: int
    hold: bool = False

    def to_json(self) -> Any:
        return {"n": self.n, "hold": self.hold}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"n", "hold"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        return cls(codec.expect_int(obj["n"], "$.n"), codec.expect_bool(obj["hold"], "$.hold"))


class MailHandler(Handler[Mail, Any, Seen]):
    TASK = Mail

    async def handle(self, task: Mail, ctx: Context[Any], state: Seen) -> Outcome[None]:
        if task.hold:
            state.holding += 1
            await state.gate.wait()
        state.runs.append((ctx.queue, task.n))
        return Outcome.completed()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


async def test_pause_and_resume_a_queue_while_a_worker_runs(database: str) -> None:
    seen = Seen()
    with Queue(database) as queue:
        held = queue.enqueue(Mail(0, hold=True), queue="mail").job_id
        config = fast_config(queues=("mail", "reports"), poll_interval=POLL)
        worker = Worker(seen, database, config=config).register(MailHandler())
        running = asyncio.create_task(worker.run())
        await eventually(lambda: seen.holding == 1, what="the held mail job to start")

        assert queue.pause_queue("mail", reason="provider outage")
        # Jobs enqueued into the paused queue, and into another one, while the worker runs.
        mail = [queue.enqueue(Mail(n), queue="mail").job_id for n in range(1, 4)]
        reports = [queue.enqueue(Mail(n), queue="reports").job_id for n in range(10, 13)]
        await eventually(
            lambda: all(queue.get(j).state is JobState.COMPLETED for j in reports), what="reports"
        )
        seen.gate.set()  # the running mail job finishes despite the pause
        await eventually(lambda: queue.get(held).state is JobState.COMPLETED, what="the held job")
        await asyncio.sleep(POLL * 4)  # several claim cycles later, still nothing from mail
        assert [queue.get(j).state for j in mail] == [JobState.PENDING] * 3
        assert sorted(seen.runs) == [("mail", 0), ("reports", 10), ("reports", 11), ("reports", 12)]
        [paused] = [q for q in queue.list_queues() if q.queue == "mail"]
        assert (paused.paused, paused.pending, paused.ready) == (True, 3, 3)

        resumed_at = time.monotonic()
        assert queue.resume_queue("mail")
        await eventually(
            lambda: all(queue.get(j).state is JobState.COMPLETED for j in mail), what="mail resumed"
        )
        # Picked up within one poll interval (plus the time to run three no-op jobs).
        assert time.monotonic() - resumed_at < POLL + 1.0
        stats = await stop(worker, running)
    assert stats.completed == 7
    assert sorted(seen.runs)[:4] == [("mail", 0), ("mail", 1), ("mail", 2), ("mail", 3)]
