"""``Queue``: enqueue, inspect and cancel jobs from synchronous code (most web apps)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, TypeVar, overload

from venturi._clock import utcnow
from venturi._enqueue import JobInfo, build_request, build_requests, job_info
from venturi._task import Task
from venturi.errors import JobNotFound
from venturi.storage._protocol import Storage
from venturi.storage._types import CancelOutcome, EnqueueResult
from venturi.storage._url import open_storage

T = TypeVar("T", bound=Task[Any])


class Queue:
    """The producer's handle on the job store.

    ``Queue()`` opens the database named by ``$VENTURI_DATABASE_URL`` (or the
    default SQLite file); ``Queue("postgresql://...")`` or ``Queue(storage)``
    pick one explicitly. The schema is created on first use.
    """

    def __init__(self, database: str | Storage | None = None, *, migrate: bool = True) -> None:
        self.storage: Storage = (
            database if database is not None and not isinstance(database, str) else open_storage(database)
        )
        if migrate:
            self.storage.migrate()

    def enqueue(
        self,
        task: Task[Any],
        *,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
        queue: str | None = None,
        conn: Any = None,
    ) -> EnqueueResult:
        """Enqueue one task; on a dedup collision its ``merge`` decides what happens.

        ``conn``: the application's own open database connection, so the job
        commits or rolls back with the application's data (PostgreSQL only).
        """
        request = build_request(task, now=utcnow(), run_at=run_at, delay=delay, queue=queue)
        return self.storage.enqueue([request], conn=conn)[0]

    def enqueue_many(
        self,
        tasks: Iterable[Task[Any]],
        *,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
        queue: str | None = None,
        conn: Any = None,
    ) -> list[EnqueueResult]:
        """Enqueue many tasks in one transaction: all of them, or none on error."""
        now = utcnow()
        batch = list(tasks)
        if not batch:
            return []
        # Encoded lazily, as the storage takes them (see build_requests).
        requests = build_requests(batch, now=now, run_at=run_at, delay=delay, queue=queue)
        return self.storage.enqueue(requests, conn=conn)

    @overload
    def get(self, job_id: str) -> JobInfo[Any]: ...
    @overload
    def get(self, job_id: str, task: type[T]) -> JobInfo[T]: ...
    def get(self, job_id: str, task: type[T] | None = None) -> JobInfo[Any]:
        """The job's state, runs, typed output, failure, carry and journal."""
        stored = self.storage.get(job_id)
        if stored is None:
            raise JobNotFound(f"no job with id {job_id!r}")
        return job_info(stored, task)

    def cancel(self, job_id: str) -> CancelOutcome:
        """Cancel a pending job, or fence a running one so its worker cannot complete it."""
        return self.storage.cancel(job_id, now=utcnow())

    def close(self) -> None:
        self.storage.close()

    def __enter__(self) -> Queue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
