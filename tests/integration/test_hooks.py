"""Hooks on a real queue and worker, on SQLite and PostgreSQL: every event, in order, with
its outcome; headers travel with the job from the enqueue to its runs; the scope a hook
returns is current while the handler runs; queue samples arrive."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

import pytest
from venturi import EnqueueResult, Hooks, Queue, QueueStats, Task, codec
from venturi._hooks import EnqueueEvent, RunEvent, RunOutcome
from venturi.worker import Context, Handler, Outcome, TaskError, Worker

from tests.integration._workers.support import fast_config

#: Set by the hook's scope; read by the handler.
CURRENT_RUN: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_run", default=None)


@dataclass(frozen=True, slots=True)
class Fated(Task[Any]):
    """``fate``: ok, fail_once (retried, then completed), dead, pause_once."""

    KIND: ClassVar[str] = "it_hooks_fated"
    n: int
    fate: str = "ok"
    key: str | None = None

    def dedup_key(self) -> str | None:
        return self.key

    def to_json(self) -> Any:
        return {"n": self.n, "fate": self.fate, "key": self.key}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        fields = frozenset({"n", "fate", "key"})
        obj = codec.expect_object(data, "$", required=fields, allowed=fields)
        key = obj["key"]
        return cls(
            codec.expect_int(obj["n"], "$.n"),
            codec.expect_str(obj["fate"], "$.fate"),
            None if key is None else codec.expect_str(key, "$.key"),
        )


@dataclass
class Seen:
    in_scope: list[tuple[int, str | None]] = field(default_factory=list)


class FatedHandler(Handler[Fated, Any, Seen]):
    TASK = Fated

    async def handle(self, task: Fated, ctx: Context[Any], state: Seen) -> Outcome[None]:
        state.in_scope.append((task.n, CURRENT_RUN.get()))
        if task.fate == "dead":
            raise TaskError.permanent("doomed", "this one was never going to work")
        if task.fate == "fail_once" and ctx.run_count == 1:
            raise TaskError.retry("flaky", "try again", retry_in=__import__("datetime").timedelta(0))
        return Outcome.completed()


class SyncFatedHandler(Handler[Fated, Any, Seen]):
    """FatedHandler with a plain ``def handle``, run on the worker's thread pool."""

    TASK = Fated

    def handle(self, task: Fated, ctx: Context[Any], state: Seen) -> Outcome[None]:
        state.in_scope.append((task.n, CURRENT_RUN.get()))
        CURRENT_RUN.set("set by the handler")  # stays in the run's own copy of the context
        return Outcome.completed()


class Recording(Hooks):
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.samples: list[Sequence[QueueStats]] = []

    def enqueue_started(self, enqueue: EnqueueEvent) -> None:
        enqueue.headers["request-id"] = f"req-{len(self.events)}"
        self.events.append(("enqueue_started", len(enqueue.tasks), enqueue.kinds))

    def enqueued(self, enqueue: EnqueueEvent) -> None:
        self.events.append(("enqueued", tuple(r.outcome.value for r in enqueue.results)))

    def merged(self, enqueue: EnqueueEvent, result: EnqueueResult) -> None:
        self.events.append(("merged", result.outcome.value))

    def claimed(self, runs: Sequence[RunEvent]) -> None:
        self.events.append(("claimed", len(runs)))

    def run_started(self, run: RunEvent) -> Any:
        self.events.append(("run_started", run.job_id, run.run_count, dict(run.headers)))

        @contextmanager
        def scope() -> Iterator[None]:
            token = CURRENT_RUN.set(run.job_id)
            try:
                yield
            finally:
                CURRENT_RUN.reset(token)

        return scope()

    def run_ended(self, run: RunEvent) -> None:
        assert run.outcome is not None
        self.events.append(("run_ended", run.job_id, run.outcome, run.error_code, run.duration is not None))

    def retried(self, run: RunEvent) -> None:
        self.events.append(("retried", run.job_id))

    def dead(self, run: RunEvent) -> None:
        self.events.append(("dead", run.job_id))

    def queues_sampled(self, queues: Sequence[QueueStats]) -> None:
        self.samples.append(queues)

    def of(self, name: str) -> list[tuple[Any, ...]]:
        return [event for event in self.events if event[0] == name]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


async def test_every_event_with_its_outcome_and_headers(database: str) -> None:
    producer, worker_hooks = Recording(), Recording()
    with Queue(database, hooks=[producer]) as queue:
        first = queue.enqueue(Fated(1)).job_id
        batch = [r.job_id for r in queue.enqueue_many([Fated(2, "fail_once"), Fated(3, "dead"), Fated(4, key="k")])]
        merged = queue.enqueue(Fated(5, key="k"))  # merged into job 4 (Replace)
        assert merged.job_id == batch[2]

        seen = Seen()
        worker = Worker(seen, database, config=fast_config(sample_interval=60), hooks=[worker_hooks])
        worker.register(FatedHandler())
        stats = await worker.run_until_idle()
    assert (stats.completed, stats.retried, stats.dead) == (3, 1, 1)

    assert producer.of("enqueue_started") == [
        ("enqueue_started", 1, (Fated.KIND,)), ("enqueue_started", 3, (Fated.KIND,)),
        ("enqueue_started", 1, (Fated.KIND,)),
    ]  # fmt: skip
    assert producer.of("enqueued") == [
        ("enqueued", ("inserted",)), ("enqueued", ("inserted",) * 3), ("enqueued", ("replaced",)),
    ]  # fmt: skip
    assert producer.of("merged") == [("merged", "replaced")]

    ended = {(e[1], e[2]) for e in worker_hooks.of("run_ended")}
    assert ended == {
        (first, RunOutcome.COMPLETED), (batch[0], RunOutcome.RETRIED), (batch[0], RunOutcome.COMPLETED),
        (batch[1], RunOutcome.DEAD), (batch[2], RunOutcome.COMPLETED),
    }  # fmt: skip
    assert worker_hooks.of("retried") == [("retried", batch[0])]
    assert worker_hooks.of("dead") == [("dead", batch[1])]
    assert next(e for e in worker_hooks.of("run_ended") if e[2] is RunOutcome.DEAD)[3] == "doomed"
    assert all(e[4] for e in worker_hooks.of("run_ended"))  # every run has its duration
    assert sum(e[1] for e in worker_hooks.of("claimed")) == 5
    # Headers set at enqueue come back on every run of the job (the batch shares one set).
    headers = {e[1]: e[3] for e in worker_hooks.of("run_started")}
    assert headers[first] == {"request-id": "req-0"}
    assert headers[batch[0]] == headers[batch[1]] == {"request-id": "req-2"}
    # The scope was current while each handler ran, and only then.
    runs = {e[1] for e in worker_hooks.of("run_started")}
    assert {job for _, job in seen.in_scope} == runs and None not in {j for _, j in seen.in_scope}
    assert CURRENT_RUN.get() is None
    # A worker samples its queues when it starts (and each sample_interval after).
    [first_sample, *_] = worker_hooks.samples
    assert [(q.queue, q.pending) for q in first_sample] == [("default", 4)]


async def test_a_worker_without_hooks_takes_no_hook_path(database: str) -> None:
    with Queue(database, hooks=[Hooks()]) as queue:  # nothing overridden: as if none
        assert queue._hooks is None
        queue.enqueue(Fated(1))
    worker = Worker(Seen(), database, config=fast_config(), hooks=[Hooks()])
    worker.register(FatedHandler())
    stats = await worker.run_until_idle()
    assert stats.completed == 1


async def test_a_sync_handler_runs_in_the_scope_a_hook_returns(database: str) -> None:
    hooks = Recording()
    with Queue(database) as queue:
        job_ids = [r.job_id for r in queue.enqueue_many([Fated(n) for n in range(4)])]
    seen = Seen()
    worker = Worker(seen, database, config=fast_config(concurrency=2), hooks=[hooks])
    worker.register(SyncFatedHandler())
    assert (await worker.run_until_idle()).completed == 4
    # Each run saw its own job's scope on its thread, as an async handler does on the loop,
    # and not what an earlier run on the same thread set.
    assert sorted(seen.in_scope) == list(enumerate(job_ids))
    assert CURRENT_RUN.get() is None
