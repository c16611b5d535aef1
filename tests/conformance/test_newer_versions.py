"""A job stored by a newer version of its task, claimed by a worker of the previous one.

During a rolling deploy in the wrong order a producer (or worker) of the next release
stores documents the workers of the current one cannot read. Such a job is handed back
before it starts, on every backend: the handler is never called, ``run_count`` and
``failure_count`` stay as they were, the journal gets a ``returned`` entry that says it
was left for a newer worker, and the job is pending again ``NEWER_VERSION_WAIT`` later.
A newer worker then runs it as its next run, as if the old worker had never seen it.

``Rolling`` is the task as the current release declares it (version 1); ``RollingNext``
is the next release's (version 2, same shape), which keeps the kind as an alias so that
both can live in this one process, as they would in two during the deploy.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar, Self

from venturi import Hooks, JobState, JournalEvent, NoCarry, Queue, RunEvent, RunOutcome, Task, codec
from venturi._clock import utcnow
from venturi.storage import EnqueueRequest, Resolution, StoredJob
from venturi.worker import Context, Handler, Outcome, Worker, WorkerConfig, WorkerStats
from venturi.worker._resolve import NEWER_VERSION_WAIT

from tests.conformance.backends import Backend
from tests.conformance.helpers import claim_request, request, result
from tests.conformance.versioned_tasks import CountCarry


@dataclass(frozen=True)
class Rolling(Task[CountCarry]):
    KIND: ClassVar[str] = "conformance.rolling"
    CARRY: ClassVar[type[Any]] = CountCarry
    name: str

    def to_json(self) -> Any:
        return {"name": self.name}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"name"}), allowed=frozenset({"name"}))
        return cls(codec.expect_str(obj["name"], "$.name"))


@dataclass(frozen=True)
class RollingNext(Rolling):
    KIND: ClassVar[str] = "conformance.rolling.next"
    ALIASES: ClassVar[tuple[str, ...]] = (Rolling.KIND,)
    VERSION: ClassVar[int] = 2  # the shape did not change: no upgrade steps


@dataclass
class Runs:
    """(task class, name, ctx.run_count, carry runs) of every handler call."""

    seen: list[tuple[str, str, int, int]] = field(default_factory=list[tuple[str, str, int, int]])


class RollingHandler(Handler[Rolling, CountCarry, Runs]):
    TASK = Rolling

    async def handle(self, task: Rolling, ctx: Context[CountCarry], state: Runs) -> Outcome[None]:
        state.seen.append(("Rolling", task.name, ctx.run_count, ctx.carry.runs))
        return Outcome.completed()


class RollingNextHandler(Handler[RollingNext, CountCarry, Runs]):
    TASK = RollingNext

    async def handle(self, task: RollingNext, ctx: Context[CountCarry], state: Runs) -> Outcome[None]:
        state.seen.append(("RollingNext", task.name, ctx.run_count, ctx.carry.runs))
        return Outcome.completed()


class Told(Hooks):
    """What the worker told its hooks of each run: ("started" | outcome, run_count)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def run_started(self, run: RunEvent) -> AbstractContextManager[Any] | None:
        self.events.append(("started", run.run_count))
        return None

    def run_ended(self, run: RunEvent) -> None:
        self.events.append((str(run.outcome), run.run_count))


async def _run(
    backend: Backend, handler: Handler[Any, CountCarry, Runs], runs: Runs, hooks: tuple[Hooks, ...] = ()
) -> WorkerStats:
    config = WorkerConfig(install_signal_handlers=False, poll_interval=timedelta(milliseconds=20))
    worker: Worker[Runs] = Worker(runs, backend.storage, config=config, migrate=False, hooks=hooks)
    worker.register(handler)
    # Bounded: a hand-back that kept the job due would have the old worker claim it forever.
    async with asyncio.timeout(10):
        return await worker.run_until_idle()


async def _stored(backend: Backend, job_id: str) -> StoredJob:
    stored = await backend.storage.get(job_id)
    assert stored is not None
    return stored


def _due_now(backend: Backend, job_id: str) -> None:
    """As if the wait had passed: the job's run time set to now (as each backend stores it)."""
    now = utcnow()
    at: float | datetime = now.timestamp() if backend.name == "sqlite" else now
    backend.raw("UPDATE {jobs} SET run_at = ? WHERE id = ?", (at, job_id))


async def _handed_back(backend: Backend, job_id: str, *, before: datetime, runs: int) -> None:
    """The job as the old worker left it: pending, ``runs`` runs, no failure, a ``returned``
    entry, due again ``NEWER_VERSION_WAIT`` after the hand-back."""
    after = utcnow()
    stored = await _stored(backend, job_id)
    assert (stored.state, stored.run_count, stored.failure_count) == (JobState.PENDING, runs, 0)
    entry = stored.journal[-1]
    assert (entry.event, entry.run) == (JournalEvent.RETURNED, runs)
    assert entry.note is not None and entry.note.startswith("left for a newer worker: the ")
    assert entry.error_code is None
    assert before + NEWER_VERSION_WAIT <= stored.run_at <= after + NEWER_VERSION_WAIT


async def test_a_payload_of_a_newer_version_is_left_for_a_newer_worker(backend: Backend) -> None:
    # What a producer of the next release stores: the task's kind, written by version 2.
    fresh = request(Rolling("a"))
    newer = EnqueueRequest(fresh.job._replace(version=2), None)
    [job] = await backend.storage.enqueue([newer])
    runs = Runs()
    told = Told()
    before = utcnow()
    stats = await _run(backend, RollingHandler(), runs, (told,))
    assert runs.seen == [], "the old worker's handler is never called"
    # Hooks hear of the claim's end, as of any hand-back, and of no run starting.
    assert told.events == [(RunOutcome.RETURNED.value, 1)]
    assert (stats.returned, stats.paused, stats.retried, stats.dead) == (1, 0, 0, 0)
    await _handed_back(backend, job.job_id, before=before, runs=0)
    stored = await _stored(backend, job.job_id)
    assert stored.journal[-1].note == (
        "left for a newer worker: the payload of kind 'conformance.rolling' was stored by "
        "version 2, and this code knows versions up to 1: it needs a newer worker (deploy "
        "workers before producers)"
    )
    assert stored.payload_version == 2, "the row is left as it was"
    # Not due yet: another old (or new) worker passing by leaves it alone.
    assert (await _run(backend, RollingHandler(), runs)).claimed == 0
    _due_now(backend, job.job_id)
    stats = await _run(backend, RollingNextHandler(), runs)
    assert runs.seen == [("RollingNext", "a", 1, 0)], "its first run"
    stored = await _stored(backend, job.job_id)
    assert (stored.state, stored.run_count, stored.failure_count) == (JobState.COMPLETED, 1, 0)
    assert [e.event for e in stored.journal] == [JournalEvent.RETURNED, JournalEvent.COMPLETED]


async def test_a_carry_of_a_newer_version_is_left_for_a_newer_worker(backend: Backend) -> None:
    [job] = await backend.storage.enqueue([request(Rolling("b"))])
    # A worker of the next release ran it once and paused it, its carry written in version 2.
    [claimed] = await backend.storage.claim(claim_request(kinds=(Rolling.KIND,)), now=utcnow())
    now = utcnow()
    paused = result(claimed, Resolution.PAUSED, now=now, carry='{"runs":1}', run_at=now, carry_version=2)
    assert await backend.storage.finish([paused], now=now) == [True]
    runs = Runs()
    before = utcnow()
    stats = await _run(backend, RollingHandler(), runs)
    assert runs.seen == [] and (stats.returned, stats.paused, stats.dead) == (1, 0, 0)
    await _handed_back(backend, job.job_id, before=before, runs=1)
    stored = await _stored(backend, job.job_id)
    assert (stored.journal[-1].note or "").startswith(
        "left for a newer worker: the carry of kind 'conformance.rolling' was stored by version 2"
    )
    assert (stored.payload_version, stored.carry_version, stored.carry) == (1, 2, '{"runs":1}')
    _due_now(backend, job.job_id)
    await _run(backend, RollingNextHandler(), runs)
    # Its second run: the old worker's hand-back used none. The carry is the newer one.
    assert runs.seen == [("RollingNext", "b", 2, 1)]
    stored = await _stored(backend, job.job_id)
    assert (stored.state, stored.run_count, stored.failure_count) == (JobState.COMPLETED, 2, 0)
    assert [e.event for e in stored.journal] == [
        JournalEvent.PAUSED, JournalEvent.RETURNED, JournalEvent.COMPLETED
    ]


@dataclass(frozen=True)
class Carefree(Task[Any]):
    """A task without carry, at version 1; a release later stores it at version 2."""

    KIND: ClassVar[str] = "conformance.carefree"
    name: str

    def to_json(self) -> Any:
        return {"name": self.name}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        obj = codec.expect_object(data, "$", required=frozenset({"name"}), allowed=frozenset({"name"}))
        return cls(codec.expect_str(obj["name"], "$.name"))


async def test_a_newer_job_of_a_task_without_carry_reads_with_only_its_payload_too_new(
    backend: Backend,
) -> None:
    """Queue.get from the older release: the payload is too new, and that is all; the
    carry of a task that has none is the empty one whatever version stamped it."""
    fresh = request(Carefree("a"))
    [job] = await backend.storage.enqueue([EnqueueRequest(fresh.job._replace(version=2), None)])
    info = Queue(backend.sync, migrate=False).get(job.job_id, Carefree)
    assert [failure.field for failure in info.decode_failures] == ["payload"]
    assert "stored by version 2" in info.decode_failures[0].message
    assert isinstance(info.carry, NoCarry)
