"""``AsyncQueue``: enqueue, inspect and cancel jobs for asyncio code; the enqueue logic is ``_enqueue``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, TypeVar, overload

from venturi._clock import utcnow
from venturi._enqueue import JobInfo, build_request, build_requests, job_info
from venturi._task import Task
from venturi.errors import JobNotFound
from venturi.storage._protocol import AsyncStorage
from venturi.storage._types import CancelOutcome, EnqueueResult
from venturi.storage._url import open_async_storage

T = TypeVar("T", bound=Task[Any])


class AsyncQueue:
    """The producer's handle on the job store.

    ``AsyncQueue()`` opens the database named by ``$VENTURI_DATABASE_URL`` (or the
    default SQLite file); ``AsyncQueue("postgresql://...")`` or ``AsyncQueue(storage)``
    pick one explicitly. The schema is created on first use.
    Call ``await queue.open()`` (or use ``async with``) first.
    """

    def __init__(
        self, database: str | AsyncStorage | None = None, *, migrate: bool = True
    ) -> None:
        self.storage: AsyncStorage = (
            database
            if database is not None and not isinstance(database, str)
            else open_async_storage(database)
        )
        if True:  # ASYNC
            self._migrate = migrate  # in open(): a constructor cannot await
        else:
            if migrate:
                self.storage.migrate()

    async def open(self) -> AsyncQueue:  # async-only
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
    ) -> EnqueueResult:
        """Enqueue one task; on a dedup collision its ``merge`` decides what happens.

        ``conn``: the application's own open database connection, so the job
        commits or rolls back with the application's data (PostgreSQL only).
        """
        request = build_request(task, now=utcnow(), run_at=run_at, delay=delay, queue=queue)
        results = await self.storage.enqueue([request], conn=conn)
        return results[0]

    async def enqueue_many(
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
        return await self.storage.enqueue(requests, conn=conn)

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

    async def cancel(self, job_id: str) -> CancelOutcome:
        """Cancel a pending job, or fence a running one so its worker cannot complete it."""
        return await self.storage.cancel(job_id, now=utcnow())

    async def close(self) -> None:
        await self.storage.close()

    async def __aenter__(self) -> AsyncQueue:
        if True:  # ASYNC
            return await self.open()
        else:
            return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
