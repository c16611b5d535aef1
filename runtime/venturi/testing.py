"""Helpers for testing code that defines, enqueues and handles venturi tasks. No server needed.

Handlers: ``run_handler`` runs one handler on one task exactly as a worker
would (the payload and carry go through their JSON codecs, the context has
the run count, history and carry you give it) and returns what happened:
the outcome or error, the final carry, the attachment, and the ``RunResult``
the worker would store (resolution, next run time, journal entry)::

    result = await venturi.testing.run_handler(FetchHandler(), FetchBookmark(...), app, run_count=3)
    assert result.completed and result.note == "fetched 412 bytes"

Producers: ``memory_queue()`` is a ``Queue`` on a private in-memory SQLite
database; ``enqueued``/``assert_enqueued`` read back what was enqueued, typed::

    queue = venturi.testing.memory_queue()
    on_bookmark_created(queue, bookmark_id, url)
    venturi.testing.assert_enqueued(queue, FetchBookmark, payload=FetchBookmark(bookmark_id, url))

``drain(queue, handlers, state)`` then runs a real worker over that database
until no ready job is left. ``run_until_complete(queue, handlers, state)`` goes
on past paused, retried and delayed jobs: on a ``FakeClock`` the test controls,
it moves the clock to the next job's due time instead of waiting for it, until
no job is pending::

    clock = venturi.testing.FakeClock()
    venturi.testing.run_until_complete_sync(queue, [ReindexCatalogHandler()], catalog, clock=clock)
    assert clock.now - start >= timedelta(minutes=10)  # ten pauses of a minute, in milliseconds
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from venturi import codec
from venturi._enqueue import JobInfo, job_info
from venturi._ids import new_job_id, new_lease_token
from venturi._journal import JournalEntry
from venturi._queue import Queue
from venturi._task import Task
from venturi._testing_worker import (
    FakeClock,
    drain,
    drain_sync,
    run_until_complete,
    run_until_complete_sync,
)
from venturi.storage._admin_types import JobFilter
from venturi.storage._run_types import ClaimedJob, Resolution, RunResult
from venturi.storage._types import JobState
from venturi.worker._config import WorkerConfig
from venturi.worker._context import Context
from venturi.worker._execute import execute
from venturi.worker._handler import Handler
from venturi.worker._outcome import Outcome, is_outcome
from venturi.worker._registry import registration_for
from venturi.worker._resolve import KEEP_CARRY, Policy, RunEnd, resolve

T = TypeVar("T", bound=Task[Any])
C = TypeVar("C")

__all__ = [
    "FakeClock",
    "HandlerResult",
    "assert_enqueued",
    "drain",
    "drain_sync",
    "enqueued",
    "jobs",
    "memory_queue",
    "run_handler",
    "run_handler_sync",
    "run_until_complete",
    "run_until_complete_sync",
]


# -- handlers ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandlerResult(Generic[C]):
    """What one run of a handler did, and what the worker would store for it."""

    outcome: Outcome[Any] | None  # what handle() returned, if it returned
    error: BaseException | None  # what it raised (or the runtime's own failure, e.g. a timeout)
    carry: C  # the carry at the end of the run
    attachment: Any
    run_result: RunResult  # the resolution, journal entry, next run time the worker would write

    @property
    def resolution(self) -> Resolution:
        return self.run_result.resolution

    @property
    def completed(self) -> bool:
        return self.resolution is Resolution.COMPLETED

    @property
    def paused(self) -> bool:
        return self.resolution is Resolution.PAUSED

    @property
    def retried(self) -> bool:
        """A retryable failure: the job would run again after its backoff."""
        return self.resolution is Resolution.RETRY

    @property
    def dead(self) -> bool:
        """A permanent failure (or the backstop): the job would not run again."""
        return self.resolution is Resolution.DEAD

    @property
    def output(self) -> Any:
        return self.outcome.output if self.outcome is not None else None

    @property
    def note(self) -> str | None:
        return self.run_result.journal_entry.note

    @property
    def error_code(self) -> str | None:
        return self.run_result.error_code


async def run_handler(
    handler: Handler[T, C, Any],
    task: T,
    state: Any,
    *,
    carry: C | None = None,
    run_count: int = 1,
    history: Sequence[JournalEntry] = (),
    job_id: str | None = None,
    queue: str | None = None,
    cancelled: bool = False,
    config: WorkerConfig | None = None,
    now: datetime | None = None,
) -> HandlerResult[C]:
    """Run ``handler`` on ``task`` once, as the worker would, and report what happened.

    ``carry`` defaults to the task's fresh carry; ``history`` is the journal the
    context shows (its failures set ``ctx.failure_count`` and count toward the
    backstop); ``cancelled`` starts the run with ``ctx.is_cancelled()`` true, as
    during a graceful shutdown; ``config`` supplies the backoff, jitter and
    backstop used to compute ``run_result``.
    """
    reg = registration_for(handler)
    if not isinstance(task, reg.task_cls):
        raise TypeError(
            f"{type(handler).__qualname__} runs {reg.task_cls.__qualname__} tasks, "
            f"got {type(task).__qualname__}"
        )
    if run_count < 1:
        raise ValueError("run_count counts runs including the current one; it starts at 1")
    start_carry: Any = carry if carry is not None else reg.task_cls.new_carry()
    history = tuple(history)
    config = config if config is not None else WorkerConfig(install_signal_handlers=False)
    now = now if now is not None else datetime.now(UTC)
    job = ClaimedJob(
        id=job_id if job_id is not None else new_job_id(),
        kind=reg.kind,
        queue=queue if queue is not None else reg.task_cls.QUEUE,
        priority=int(task.priority()),
        # Through JSON both ways, like a stored job: a codec bug shows up here, not in production.
        payload=codec.dumps(task.to_json()),
        carry=codec.dumps(start_carry.to_json(), what="carry"),
        run_count=run_count,
        failure_count=sum(1 for entry in history if entry.is_failure),
        lease_token=new_lease_token(),
        lease_expires_at=now,
        concurrency_key=task.concurrency_key(),
        journal=history,
        payload_version=reg.version,  # written by this very code: the current version
        carry_version=reg.version,
        journal_count=len(history),
    )
    slots: list[Context[Any] | None] = [None]
    end = await execute(
        reg, job, state, slots, 0, release_on_cancel=False, cancel_requested=cancelled
    )
    return _result(end, start_carry, config, now)


def run_handler_sync(
    handler: Handler[T, C, Any], task: T, state: Any, **options: Any
) -> HandlerResult[C]:
    """``run_handler`` in a new event loop, for synchronous tests."""
    return asyncio.run(run_handler(handler, task, state, **options))


def _result(end: RunEnd, start_carry: Any, config: WorkerConfig, now: datetime) -> HandlerResult[Any]:
    # A refused outcome (an output of the wrong type, say) shows in run_result, not error.
    run_result = resolve(end, now=now, policy=Policy.of(config))
    return HandlerResult(
        outcome=end.outcome if is_outcome(end.outcome) else None,
        error=end.error,
        carry=start_carry if end.carry is KEEP_CARRY else end.carry,
        attachment=end.attachment,
        run_result=run_result,
    )


# -- producers ----------------------------------------------------------------------------


def memory_queue() -> Queue:
    """A ``Queue`` on a fresh, private in-memory SQLite database (gone when closed)."""
    from venturi.storage.sqlite import SqliteStorage

    queue = Queue(SqliteStorage(":memory:"))
    queue.owns_storage = True  # nobody else holds this storage: closing the queue ends it
    return queue


def jobs(
    queue: Queue, task_cls: type[T], *, states: Iterable[JobState] = ()
) -> list[JobInfo[T]]:
    """Every stored job of ``task_cls`` (optionally only in ``states``), oldest first, typed."""
    kind = _kind(task_cls)
    found: list[JobInfo[T]] = []
    before: str | None = None
    state_filter = tuple(states)
    while True:
        page = queue.storage.list_jobs(
            JobFilter(kinds=(kind,), states=state_filter, limit=500, before_id=before)
        )
        for stored in page:
            full = queue.storage.get(stored.id) or stored
            found.append(job_info(full, task_cls))
        if len(page) < 500:
            break
        before = page[-1].id
    found.reverse()
    return found


def enqueued(queue: Queue, task_cls: type[T], *, states: Iterable[JobState] = ()) -> list[T]:
    """The payloads of every stored job of ``task_cls``, oldest first, as typed tasks."""
    return [info.payload for info in jobs(queue, task_cls, states=states)]


def assert_enqueued(
    queue: Queue,
    task_cls: type[T],
    payload: T | dict[str, Any] | None = None,
    *,
    count: int | None = None,
    where: Callable[[T], bool] | None = None,
    states: Iterable[JobState] = (),
) -> list[T]:
    """Assert that jobs of ``task_cls`` were enqueued; return the matching payloads.

    ``payload`` (a task, or its JSON as a dict) and ``where`` (a predicate)
    narrow the match; ``count`` is the exact number expected (default: at
    least one).
    """
    kind = _kind(task_cls)
    every = enqueued(queue, task_cls, states=states)
    expected_json = None
    if payload is not None:
        expected_json = payload if isinstance(payload, dict) else payload.to_json()
    matching = [
        task
        for task in every
        if (expected_json is None or task.to_json() == expected_json)
        and (where is None or where(task))
    ]
    ok = len(matching) == count if count is not None else bool(matching)
    if not ok:
        wanted = f"exactly {count}" if count is not None else "at least one"
        narrowed: list[str] = []
        if expected_json is not None:
            narrowed.append(f"payload {expected_json!r}")
        if where is not None:
            narrowed.append("the where= predicate")
        detail = f" matching {' and '.join(narrowed)}" if narrowed else ""
        listing = "\n".join(f"  - {task.to_json()!r}" for task in every[:20]) or "  (none)"
        raise AssertionError(
            f"expected {wanted} {kind!r} job(s){detail}, found {len(matching)}; "
            f"all {len(every)} {kind!r} job(s):\n{listing}"
        )
    return matching


def _kind(task_cls: type[Task[Any]]) -> str:
    kind = getattr(task_cls, "KIND", None)
    if not isinstance(kind, str):
        raise TypeError(f"{task_cls!r} is not a venturi Task class with a KIND")
    return kind
