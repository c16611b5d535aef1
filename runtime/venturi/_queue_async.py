"""``AsyncQueue``: enqueue, inspect and cancel jobs for asyncio code; the enqueue logic is ``_enqueue``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar, overload

from venturi._bulk import (
    DEFAULT_BATCH_SIZE,
    BulkAction,
    BulkResult,
    Counted,
    Progress,
    check_batch_size,
    queue_name,
    selection,
)
from venturi._clock import utcnow
from venturi._enqueue import JobInfo, build_request, build_requests, job_info
from venturi._forget import ForgetResult, added, forgotten_ref, requested_by_text
from venturi._task import Task
from venturi.errors import ConfigurationError, JobNotFound, JobWaitTimeout
from venturi.storage._types import TERMINAL_STATES

if TYPE_CHECKING:
    from venturi._hooks import Hooks, HookSet
    from venturi.storage._admin_types import CancelOutcome, JobSelection, QueueStats
    from venturi.storage._erasure_types import Erasure
    from venturi.storage._protocol import AsyncStorage
    from venturi.storage._types import EnqueueResult, JobState

T = TypeVar("T", bound=Task[Any])


class AsyncQueue:
    """The producer's handle on the job store.

    ``AsyncQueue()`` opens the database named by ``$VENTURI_DATABASE_URL`` (or the
    default SQLite file); ``AsyncQueue("postgresql://...")`` or ``AsyncQueue(storage)``
    pick one explicitly. The schema is created on first use. ``hooks``
    (``venturi.Hooks``) are told of every enqueue (``venturi.otel`` traces them).
    Call ``await queue.open()`` (or use ``async with``) first.
    """

    def __init__(
        self,
        database: str | AsyncStorage | None = None,
        *,
        migrate: bool = True,
        hooks: Iterable[Hooks] = (),
    ) -> None:
        #: A storage the caller passed in stays the caller's: ``close`` leaves it open.
        self.owns_storage = database is None or isinstance(database, str)
        # None unless a hook overrides something: the enqueue path then skips hooks entirely.
        self._hooks: HookSet | None = None
        if hooks:  # the hooks module is imported by a queue given hooks, not by import venturi
            from venturi import _hooks

            self._hooks = _hooks.HookSet.of(hooks)
        if database is None or isinstance(database, str):
            # Imported here: URL parsing is for queues that open their storage from a URL.
            from venturi.storage._url import open_async_storage

            self.storage: AsyncStorage = open_async_storage(database)
        else:
            self.storage = database
        if True:  # ASYNC
            self._migrate = migrate  # in open(): a constructor cannot await
        else:
            if migrate:
                self.storage.migrate()

    async def open(self) -> AsyncQueue:
        """Open the storage's connections now (and migrate, if not done yet): a web app
        calls it at start-up, so that no request pays for them. Calls open them anyway."""
        await self.storage.open()
        if True:  # ASYNC
            if self._migrate:
                await self.storage.migrate()
        return self

    async def enqueue(
        self,
        task: Task[Any],
        *,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
        queue: str | None = None,
        conn: Any = None,
        tags: Iterable[str] | None = None,
    ) -> EnqueueResult:
        """Enqueue one task; on a dedup collision its ``merge`` decides what happens.

        ``conn``: the application's own open database connection, so the job
        commits or rolls back with the application's data (PostgreSQL only).
        ``tags``: labels stored with the job beside the task's own ``TAGS``, to
        filter on (``cancel_jobs``, ``retry_jobs``, ``venturi jobs list --tag``); a merge into a
        pending job leaves that job's tags as they are.
        """
        hooks = self._hooks
        if hooks is None:
            request = build_request(
                task, now=utcnow(), run_at=run_at, delay=delay, queue=queue, tags=tags
            )
            results = await self.storage.enqueue([request], conn=conn)
            return results[0]
        event = hooks.event([task])
        headers = hooks.headers_json(event)
        try:
            request = build_request(
                task, now=utcnow(), run_at=run_at, delay=delay, queue=queue, headers=headers,
                tags=tags,
            )  # fmt: skip
            results = await self.storage.enqueue([request], conn=conn)
        except BaseException as exc:
            hooks.call("enqueue_failed", event, exc)
            raise
        hooks.after_enqueue(event, results)
        return results[0]

    async def enqueue_many(
        self,
        tasks: Iterable[Task[Any]],
        *,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
        queue: str | None = None,
        conn: Any = None,
        tags: Iterable[str] | None = None,
    ) -> list[EnqueueResult]:
        """Enqueue many tasks in one transaction: all of them, or none on error.

        ``tags`` are added to every job of the batch (see ``enqueue``).
        """
        now = utcnow()
        batch = list(tasks)
        if not batch:
            return []
        hooks = self._hooks
        if hooks is None:
            # Encoded lazily, as the storage takes them (see build_requests).
            requests = build_requests(
                batch, now=now, run_at=run_at, delay=delay, queue=queue, tags=tags
            )
            return await self.storage.enqueue(requests, conn=conn)
        event = hooks.event(batch)
        headers = hooks.headers_json(event)
        try:
            requests = build_requests(
                batch, now=now, run_at=run_at, delay=delay, queue=queue, headers=headers,
                tags=tags,
            )  # fmt: skip
            results = await self.storage.enqueue(requests, conn=conn)
        except BaseException as exc:
            hooks.call("enqueue_failed", event, exc)
            raise
        hooks.after_enqueue(event, results)
        return results

    @overload
    async def get(self, job_id: str) -> JobInfo[Any]: ...
    @overload
    async def get(self, job_id: str, task: type[T]) -> JobInfo[T]: ...
    async def get(self, job_id: str, task: type[T] | None = None) -> JobInfo[Any]:
        """The job's state, runs, typed output, failure, carry and journal."""
        stored = await self.storage.get(job_id)
        if stored is None:
            raise JobNotFound(f"no job with id {job_id!r}")
        return job_info(stored, task)

    @overload
    async def wait(self, job_id: str, timeout: float | timedelta) -> JobInfo[Any]: ...
    @overload
    async def wait(self, job_id: str, timeout: float | timedelta, task: type[T]) -> JobInfo[T]: ...
    async def wait(
        self, job_id: str, timeout: float | timedelta, task: type[T] | None = None
    ) -> JobInfo[Any]:
        """Wait until the job has ended (completed, dead or cancelled); return it, typed.

        ``info.state`` says how it ended and ``info.output`` holds the typed
        output of a completed job. PostgreSQL wakes on the notification the
        job's end sends; SQLite reads the job again with backoff (a few
        milliseconds at first, then up to a quarter of a second). Raises
        ``JobWaitTimeout`` (a ``TimeoutError``, with the job as it was) when
        ``timeout`` (seconds, or a ``timedelta``) passes first: the job goes
        on. ``JobNotFound`` for an unknown id. A web request should rarely
        wait for a job: see "Waiting for a result" in docs/runtime.md.
        """
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
        if not seconds >= 0:
            raise ConfigurationError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        stored = await self.storage.wait(job_id, timeout=seconds)
        if stored is None:
            raise JobNotFound(f"no job with id {job_id!r}")
        info = job_info(stored, task)
        if stored.state not in TERMINAL_STATES:
            raise JobWaitTimeout(
                f"job {job_id} is still {stored.state.value} after {seconds:g} s", info
            )
        return info

    async def cancel(self, job_id: str) -> CancelOutcome:
        """Cancel a pending job, or fence a running one so its worker cannot complete it."""
        return await self.storage.cancel(job_id, now=utcnow())

    # -- queue controls ------------------------------------------------------------

    async def pause_queue(self, name: str, *, reason: str | None = None) -> bool:
        """Stop every worker claiming from queue ``name`` until ``resume_queue``.

        The pause is stored in the database, so it holds for every worker on
        every host and survives restarts; each worker honours it at its next
        claim. Enqueueing into the queue still works and jobs already running
        finish. Returns False if the queue was paused already.
        """
        return await self.storage.pause_queue(queue_name(name), now=utcnow(), reason=reason)

    async def resume_queue(self, name: str) -> bool:
        """Let workers claim from queue ``name`` again; False if it was not paused."""
        return await self.storage.resume_queue(queue_name(name))

    async def list_queues(self) -> list[QueueStats]:
        """Every queue with pending or running jobs, or paused: its pause, backlog, oldest ready job."""
        return await self.storage.queue_stats(now=utcnow())

    # -- bulk operations -----------------------------------------------------------

    async def cancel_jobs(
        self,
        *,
        kinds: Iterable[str] = (),
        queues: Iterable[str] = (),
        states: Iterable[JobState | str] = (),
        older_than: timedelta | None = None,
        tags: Iterable[str] = (),
        batch_size: int = DEFAULT_BATCH_SIZE,
        dry_run: bool = False,
        counted: Counted | None = None,
        progress: Progress | None = None,
    ) -> BulkResult:
        """Cancel every job that matches (pending and running ones unless ``states`` says).

        The matching jobs are counted first (``result.matched``, also given to
        ``counted``); then they are cancelled in transactions of ``batch_size``
        jobs, a running one fenced like ``cancel``, and ``progress`` is told the
        total after each batch. Jobs enqueued after the count are left alone.
        ``tags``: only jobs carrying every one of them. ``dry_run`` only counts.
        """
        now = utcnow()
        chosen = selection(
            BulkAction.CANCEL, kinds=kinds, queues=queues, states=states,
            older_than=older_than, tags=tags, now=now,
        )  # fmt: skip
        return await self._bulk(
            BulkAction.CANCEL, chosen, now, batch_size, dry_run, counted, progress
        )

    async def retry_jobs(
        self,
        *,
        kinds: Iterable[str] = (),
        queues: Iterable[str] = (),
        states: Iterable[JobState | str] = (),
        older_than: timedelta | None = None,
        tags: Iterable[str] = (),
        batch_size: int = DEFAULT_BATCH_SIZE,
        dry_run: bool = False,
        counted: Counted | None = None,
        progress: Progress | None = None,
    ) -> BulkResult:
        """Send every matching dead or cancelled job back to pending, as ``cancel_jobs`` cancels."""
        now = utcnow()
        chosen = selection(
            BulkAction.RETRY, kinds=kinds, queues=queues, states=states,
            older_than=older_than, tags=tags, now=now,
        )  # fmt: skip
        return await self._bulk(
            BulkAction.RETRY, chosen, now, batch_size, dry_run, counted, progress
        )

    async def _bulk(
        self,
        action: BulkAction,
        chosen: JobSelection,
        now: datetime,
        batch_size: int,
        dry_run: bool,
        counted: Counted | None,
        progress: Progress | None,
    ) -> BulkResult:
        check_batch_size(batch_size)
        count = await self.storage.count_jobs(chosen)
        if counted is not None:
            counted(count)
        step = self.storage.cancel_jobs if action is BulkAction.CANCEL else self.storage.retry_jobs
        changed = batches = 0
        after: str | None = None
        while not dry_run and count.last_id is not None:
            batch = await step(
                chosen, now=now, limit=batch_size, after_id=after, up_to_id=count.last_id
            )
            if batch.last_id is None:
                break
            changed, batches, after = changed + batch.changed, batches + 1, batch.last_id
            if progress is not None:
                progress(changed)
        return BulkResult(count, changed, batches)

    # -- erasure ---------------------------------------------------------------------

    async def forget(
        self,
        *,
        ref: tuple[str, Any],
        requested_by: str | None = None,
        dry_run: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        counted: Counted | None = None,
        progress: Progress | None = None,
    ) -> ForgetResult:
        """Delete every job that refers to an entity: ``ref=("user", "123")`` finds the
        jobs whose task declares ``refs: {user: ...}`` with that value, through an index.

        The jobs are counted first (``result.matched``, also given to ``counted``);
        then, unless ``dry_run``, an audit record is written (``requested_by``: who
        asked, free text; when; the reference; the counts, never the data) and the jobs
        are deleted with their journal in transactions of ``batch_size``, whatever their
        state. A running job is deleted too: that is its fence, so its worker's result is
        rejected and nothing of it remains when its run ends. ``progress`` is told the
        total after each batch. Jobs enqueued after the count are left alone.
        """
        text = forgotten_ref(ref)
        who = requested_by_text(requested_by)
        check_batch_size(batch_size)
        count = await self.storage.count_ref(text)
        if counted is not None:
            counted(count)
        if dry_run:
            return ForgetResult(text, count)
        erasure_id = await self.storage.open_erasure(text, requested_by=who, now=utcnow())
        erased: dict[JobState, int] = {}
        batches = 0
        after: str | None = None
        while count.last_id is not None:
            batch = await self.storage.forget_batch(
                text, erasure_id=erasure_id, limit=batch_size, after_id=after,
                up_to_id=count.last_id,
            )  # fmt: skip
            if batch.last_id is None:
                break
            erased, batches, after = added(erased, batch.erased), batches + 1, batch.last_id
            if progress is not None:
                progress(sum(erased.values()))
        return ForgetResult(text, count, erased, erasure_id, batches)

    async def erasures(self, *, limit: int = 100) -> list[Erasure]:
        """The newest ``limit`` erasures' audit records (``venturi jobs forget --list``)."""
        return await self.storage.erasures(limit=limit)

    async def close(self) -> None:
        """Close the storage this queue opened from a URL; one passed in is left open."""
        if self.owns_storage:
            await self.storage.close()

    async def __aenter__(self) -> AsyncQueue:
        if True:  # ASYNC
            return await self.open()
        else:
            return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
