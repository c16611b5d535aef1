"""A worker completing a task with a unique period holds its key: the next enqueue of
the key is a duplicate of the completed job, on a real worker run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from venturi import EnqueueOutcome, Queue
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig

from tests.conformance.unique_tasks import DailyDigest


class DigestHandler(Handler[DailyDigest, Any, None]):
    TASK = DailyDigest

    async def handle(self, task: DailyDigest, ctx: Context[Any], state: None) -> Outcome[None]:
        return Outcome.completed_with(f"sent to {task.user}")


async def test_a_completed_job_blocks_its_key_for_the_period(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    with Queue(url) as queue:
        first = queue.enqueue(DailyDigest("ann")).job_id
    worker: Worker[None] = Worker(None, url, config=WorkerConfig(install_signal_handlers=False))
    worker.register(DigestHandler())
    assert (await worker.run_until_idle()).completed == 1
    with Queue(url) as queue:
        again = queue.enqueue(DailyDigest("ann"))
        assert (again.outcome, again.existing_job_id) == (EnqueueOutcome.DUPLICATE, first)
        assert queue.enqueue(DailyDigest("bob")).outcome is EnqueueOutcome.INSERTED
