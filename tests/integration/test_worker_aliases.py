"""A renamed task on a real SQLite file: jobs stored under its former kind run with its handler,
and a job stored by a newer version of the task is left for a newer worker.

``Before`` is the task as producers of the previous release declared it; ``After``
is the renamed one, which keeps the old kind under ``ALIASES``. Both live in
this process (as they would during a rolling deploy, in two) to store jobs
the old way and run them the new way.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import JobState, JournalEvent, Queue, Task, task_class_for
from venturi.worker import Context, Handler, Outcome

from tests.integration._workers.support import make_worker
from tests.integration.tasks import Probe


@dataclass(frozen=True, slots=True)
class Before(Task[Any]):
    KIND: ClassVar[str] = "integration.alias_before"
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(n=data["n"])


@dataclass(frozen=True, slots=True)
class After(Task[Any]):
    KIND: ClassVar[str] = "integration.alias_after"
    ALIASES: ClassVar[tuple[str, ...]] = ("integration.alias_before",)
    n: int

    def to_json(self) -> Any:
        return {"n": self.n}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return cls(n=data["n"])


class AfterHandler(Handler[After, Any, Probe]):
    TASK = After

    async def handle(self, task: After, ctx: Context[Any], state: Probe) -> Outcome[None]:
        state.runs.append((ctx.job_id, task.n))
        return Outcome.completed()


async def test_jobs_under_an_alias_run_and_the_worker_says_how_many_wait(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "jobs.db"
    with Queue(str(db)) as queue:
        old = [queue.enqueue(Before(n=n)).job_id for n in range(3)]
        later = queue.enqueue(Before(n=9), delay=timedelta(hours=1)).job_id  # not ready yet
        new = queue.enqueue(After(n=5)).job_id
    probe = Probe()
    caplog.set_level(logging.INFO, logger="venturi.worker")
    stats = await make_worker(db, [AfterHandler], probe).run_until_idle()
    assert stats.completed == 4
    assert sorted(probe.runs) == sorted([*zip(old, range(3), strict=True), (new, 5)])
    [report] = [r for r in caplog.records if getattr(r, "event", None) == "alias_backlog"]
    assert report.getMessage() == (
        "3 ready job(s) wait under the alias integration.alias_before of "
        "integration.alias_after; this worker runs them"
    )
    with Queue(str(db)) as queue:
        assert queue.get(later).state is JobState.PENDING


def test_the_task_of_an_alias_is_found_by_its_kind() -> None:
    assert task_class_for("integration.alias_after") is After
    # Here Before still declares the old kind itself; in a process without it, the alias
    # leads to the renamed task.
    assert task_class_for("integration.alias_before") is Before
    from venturi._task import _ALIASES  # pyright: ignore[reportPrivateUsage]

    assert _ALIASES["integration.alias_before"] is After


async def test_a_job_stored_by_a_newer_version_is_handed_back_untouched(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    with Queue(str(db)) as queue:
        job_id = queue.enqueue(After(n=1)).job_id
    # As a producer of the next release would have stored it (version 5 of the task).
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE jobs SET payload_version = 5 WHERE id = ?", (job_id,))
    probe = Probe()
    stats = await make_worker(db, [AfterHandler], probe).run_until_idle()
    assert probe.runs == [] and stats.returned == 1 and stats.paused == stats.dead == 0
    with Queue(str(db)) as queue:
        stored = queue.storage.get(job_id)
    assert stored is not None
    assert (stored.state, stored.run_count, stored.failure_count, stored.payload_version) == (
        JobState.PENDING, 0, 0, 5
    )
    entry = stored.journal[-1]
    assert (entry.event, entry.run) == (JournalEvent.RETURNED, 0)
    assert entry.note is not None and entry.note.startswith(
        "left for a newer worker: the payload of kind 'integration.alias_after' was stored by "
        "version 5, and this code knows versions up to 1"
    )
    assert stored.run_at > entry.at, "it waits before a worker looks again"
