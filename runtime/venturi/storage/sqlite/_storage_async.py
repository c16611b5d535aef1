"""``AsyncSqliteStorage``: the ``AsyncStorage`` protocol over ``SqliteStorage``, inline.

Each coroutine calls the synchronous method directly on the event loop's
thread instead of handing it to a thread pool. SQLite is in-process: claims,
batched completions and dedup enqueues take microseconds to a few hundred
microseconds (an fsync at ``synchronous=FULL``), which is less than the cost
of a thread hop (measured in ``research/sqlite-probe.md``: a DB thread cost
10-27% of throughput for no gain). The rare long waits — another process
holding the write lock — are bounded by the storage's ``max_lock_wait``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi.storage._types import (
    BulkBatch,
    CancelOutcome,
    Capabilities,
    ClaimedJob,
    ClaimRequest,
    EnqueueRequest,
    EnqueueResult,
    JobCount,
    JobFilter,
    JobSelection,
    KindStats,
    QueueStats,
    RunResult,
    StoredJob,
)
from venturi.storage.sqlite._storage import SqliteStorage


class AsyncSqliteStorage:
    """Wraps a ``SqliteStorage``; ``.sync`` is the wrapped object for synchronous callers."""

    def __init__(self, sync: SqliteStorage) -> None:
        self.sync = sync

    @property
    def capabilities(self) -> Capabilities:
        return self.sync.capabilities

    async def migrate(self) -> int:
        return self.sync.migrate()

    async def schema_version(self) -> int:
        return self.sync.schema_version()

    async def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]:
        return self.sync.enqueue(requests, conn=conn)

    async def get(self, job_id: str) -> StoredJob | None:
        return self.sync.get(job_id)

    async def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome:
        return self.sync.cancel(job_id, now=now)

    async def retry(self, job_id: str, *, now: datetime) -> bool:
        return self.sync.retry(job_id, now=now)

    async def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]:
        return self.sync.list_jobs(job_filter)

    async def stats(
        self, *, now: datetime, windows_minutes: Sequence[int] = (1, 5, 15)
    ) -> list[KindStats]:
        return self.sync.stats(now=now, windows_minutes=windows_minutes)

    async def prune(self, *, now: datetime, limit: int) -> int:
        return self.sync.prune(now=now, limit=limit)

    async def claim(self, request: ClaimRequest, *, now: datetime) -> list[ClaimedJob]:
        return self.sync.claim(request, now=now)

    async def finish(
        self,
        results: Sequence[RunResult],
        *,
        now: datetime,
        started: Sequence[tuple[str, str]] = (),
    ) -> list[bool]:
        return self.sync.finish(results, now=now, started=started)

    async def heartbeat(
        self, leases: Sequence[tuple[str, str]], *, lease_duration: timedelta, now: datetime
    ) -> set[str]:
        return self.sync.heartbeat(leases, lease_duration=lease_duration, now=now)

    async def reclaim_expired(
        self, *, now: datetime, limit: int, max_failures: int | None
    ) -> int:
        return self.sync.reclaim_expired(now=now, limit=limit, max_failures=max_failures)

    async def pending_counts_by_kind(self) -> dict[str, int]:
        return self.sync.pending_counts_by_kind()

    async def pause_queue(self, queue: str, *, now: datetime, reason: str | None = None) -> bool:
        return self.sync.pause_queue(queue, now=now, reason=reason)

    async def resume_queue(self, queue: str) -> bool:
        return self.sync.resume_queue(queue)

    async def queue_stats(self, *, now: datetime) -> list[QueueStats]:
        return self.sync.queue_stats(now=now)

    async def count_jobs(self, selection: JobSelection) -> JobCount:
        return self.sync.count_jobs(selection)

    async def cancel_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        return self.sync.cancel_jobs(
            selection, now=now, limit=limit, after_id=after_id, up_to_id=up_to_id
        )

    async def retry_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        return self.sync.retry_jobs(
            selection, now=now, limit=limit, after_id=after_id, up_to_id=up_to_id
        )

    async def close(self) -> None:
        self.sync.close()
