"""``AsyncQueue``: the asyncio twin of ``Queue``; the enqueue logic itself is shared."""

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
    """Async producer handle. Call ``await queue.open()`` (or use ``async with``) first."""

    def __init__(self, database: str | AsyncStorage | None = None, *, migrate: bool = True) -> None:
        self.storage: AsyncStorage = (
            database if database is not None and not isinstance(database, str) else open_async_storage(database)
        )
        self._migrate = migrate

    async def open(self) -> AsyncQueue:
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
        request = build_request(task, now=utcnow(), run_at=run_at, delay=delay, queue=queue)
        return (await self.storage.enqueue([request], conn=conn))[0]

    async def enqueue_many(
        self,
        tasks: Iterable[Task[Any]],
        *,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
        queue: str | None = None,
        conn: Any = None,
    ) -> list[EnqueueResult]:
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
        stored = await self.storage.get(job_id)
        if stored is None:
            raise JobNotFound(f"no job with id {job_id!r}")
        return job_info(stored, task)

    async def cancel(self, job_id: str) -> CancelOutcome:
        return await self.storage.cancel(job_id, now=utcnow())

    async def close(self) -> None:
        await self.storage.close()

    async def __aenter__(self) -> AsyncQueue:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
