"""``AsyncSqliteStorage``: the ``AsyncStorage`` protocol over ``SqliteStorage``, off the loop.

Calls run on a thread of the storage's own (``venturi._threads``), so a coroutine
awaiting SQLite — a write waiting for another process's lock above all —
never stops the event loop: a web server's other requests, a worker's
heartbeats and its other handlers go on.

One exception, measured: an enqueue that finds the write lock free (nothing
else of this storage in progress, no other process writing) commits at once
on the caller's thread and then yields to the loop (one such commit per turn of
the loop; the others meanwhile take the thread). The thread hop costs
25-45 µs on the development machine, a fifth of a durable one-job enqueue
(``tests/benchmarks/test_loop_lag_bench.py`` compares both); the loop then
pays one commit's fsync per enqueue, never a wait for another process. The
worker's claims and completions are batched, so they always take the thread
and pay the hop once per batch, not per job.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi._threads import Threads
from venturi.storage._admin_types import (
    BulkBatch,
    CancelOutcome,
    Capabilities,
    JobCount,
    JobFilter,
    JobSelection,
    KindStats,
    QueueStats,
    RateLimitUse,
    ScheduleInfo,
    ScheduleRecord,
)
from venturi.storage._erasure_types import Erasure, ForgetBatch
from venturi.storage._run_types import ClaimedJob, ClaimLimit, ClaimRequest, RunResult
from venturi.storage._types import EnqueueRequest, EnqueueResult, StoredJob
from venturi.storage._waiting import poll_async
from venturi.storage.sqlite._storage import SqliteStorage
from venturi.storage.sqlite._worker_writes import WorkerWrites


class AsyncSqliteStorage:
    """Wraps a ``SqliteStorage``; ``.sync`` is the wrapped object for synchronous callers.

    ``close()`` closes the wrapped storage too: the async storage owns it.
    """

    def __init__(self, sync: SqliteStorage) -> None:
        self.sync = sync
        self._thread = Threads(f"venturi-sqlite:{sync.path}")
        self._worker_writes = WorkerWrites(sync, self._thread)
        self._inline_taken = False

    @property
    def capabilities(self) -> Capabilities:
        return self.sync.capabilities

    async def open(self) -> None:
        """Start the storage's thread and check the database answers, ahead of the first call."""
        await self._thread.run(self.sync.schema_version)

    async def migrate(self) -> int:
        return await self._thread.run(self.sync.migrate)

    async def schema_version(self) -> int:
        return await self._thread.run(self.sync.schema_version)

    async def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]:
        sync = self.sync
        if conn is not None:
            return sync.enqueue(requests, conn=conn)  # refused at once: UnsupportedCapability
        batch = list(requests)
        if not self._inline_taken:
            # One inline commit per turn of the loop: others in the same turn take the
            # thread, so many producers at once never hold the loop for more than one fsync.
            self._inline_taken = True
            asyncio.get_running_loop().call_soon(self._give_back_inline)
            done = sync.enqueue_if_free(batch)
            if done is not None:
                await asyncio.sleep(0)  # the loop's other work before this caller goes on
                return done
        return await self._thread.run(lambda: sync.enqueue(batch))

    def _give_back_inline(self) -> None:
        self._inline_taken = False

    async def get(self, job_id: str) -> StoredJob | None:
        sync = self.sync
        return await self._thread.run(lambda: sync.get(job_id))

    async def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome:
        sync = self.sync
        return await self._thread.run(lambda: sync.cancel(job_id, now=now))

    async def wait(self, job_id: str, *, timeout: float) -> StoredJob | None:
        # Polled: each read on the storage's thread, each pause an asyncio sleep.
        sync = self.sync

        async def read() -> StoredJob | None:
            return await self._thread.run(lambda: sync.get(job_id))

        return await poll_async(read, timeout)

    async def retry(self, job_id: str, *, now: datetime) -> bool:
        sync = self.sync
        return await self._thread.run(lambda: sync.retry(job_id, now=now))

    async def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]:
        sync = self.sync
        return await self._thread.run(lambda: sync.list_jobs(job_filter))

    async def stats(
        self, *, now: datetime, windows_minutes: Sequence[int] = (1, 5, 15)
    ) -> list[KindStats]:
        sync = self.sync
        return await self._thread.run(lambda: sync.stats(now=now, windows_minutes=windows_minutes))

    async def prune(self, *, now: datetime, limit: int) -> int:
        sync = self.sync
        return await self._thread.run(lambda: sync.prune(now=now, limit=limit))

    async def reclaim_space(self) -> None:
        """Nothing to do (see ``SqliteStorage.reclaim_space``); the thread is not woken."""

    async def claim(self, request: ClaimRequest, *, now: datetime) -> list[ClaimedJob]:
        # A claim queued right behind a finish shares its transaction (``_worker_writes``).
        return await self._worker_writes.claim(request, now)

    async def next_rate_slot(
        self, limits: Sequence[ClaimLimit], *, now: datetime
    ) -> datetime | None:
        sync = self.sync
        return await self._thread.run(lambda: sync.next_rate_slot(limits, now=now))

    async def rate_limit_use(self, *, now: datetime) -> list[RateLimitUse]:
        sync = self.sync
        return await self._thread.run(lambda: sync.rate_limit_use(now=now))

    async def finish(
        self,
        results: Sequence[RunResult],
        *,
        now: datetime,
        started: Sequence[tuple[str, str]] = (),
    ) -> list[bool]:
        return await self._worker_writes.finish(results, now, started)

    async def heartbeat(
        self, leases: Sequence[tuple[str, str]], *, lease_duration: timedelta, now: datetime
    ) -> set[str]:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.heartbeat(leases, lease_duration=lease_duration, now=now)
        )

    async def reclaim_expired(
        self, *, now: datetime, limit: int, max_failures: int | None
    ) -> int:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.reclaim_expired(now=now, limit=limit, max_failures=max_failures)
        )

    async def pending_counts_by_kind(self, queues: Sequence[str] = ()) -> dict[str, int]:
        sync = self.sync
        return await self._thread.run(lambda: sync.pending_counts_by_kind(queues))

    async def ready_counts_of_kinds(self, kinds: Sequence[str], *, now: datetime) -> dict[str, int]:
        return await self._thread.run(lambda: self.sync.ready_counts_of_kinds(kinds, now=now))

    async def record_schedules(self, records: Sequence[ScheduleRecord], *, now: datetime) -> None:
        sync = self.sync
        await self._thread.run(lambda: sync.record_schedules(records, now=now))

    async def enqueue_slot(
        self,
        schedule: str,
        slot: datetime,
        request: EnqueueRequest,
        *,
        catch_up: bool,
        now: datetime,
    ) -> EnqueueResult | None:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.enqueue_slot(schedule, slot, request, catch_up=catch_up, now=now)
        )

    async def schedules(self) -> list[ScheduleInfo]:
        sync = self.sync
        return await self._thread.run(sync.schedules)

    async def pause_queue(self, queue: str, *, now: datetime, reason: str | None = None) -> bool:
        sync = self.sync
        return await self._thread.run(lambda: sync.pause_queue(queue, now=now, reason=reason))

    async def resume_queue(self, queue: str) -> bool:
        sync = self.sync
        return await self._thread.run(lambda: sync.resume_queue(queue))

    async def queue_stats(self, *, now: datetime) -> list[QueueStats]:
        sync = self.sync
        return await self._thread.run(lambda: sync.queue_stats(now=now))

    async def count_jobs(self, selection: JobSelection) -> JobCount:
        sync = self.sync
        return await self._thread.run(lambda: sync.count_jobs(selection))

    async def cancel_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.cancel_jobs(
                selection, now=now, limit=limit, after_id=after_id, up_to_id=up_to_id
            )
        )

    async def count_ref(self, ref: str) -> JobCount:
        sync = self.sync
        return await self._thread.run(lambda: sync.count_ref(ref))

    async def open_erasure(self, ref: str, *, requested_by: str | None, now: datetime) -> int:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.open_erasure(ref, requested_by=requested_by, now=now)
        )

    async def forget_batch(
        self, ref: str, *, erasure_id: int, limit: int, after_id: str | None, up_to_id: str
    ) -> ForgetBatch:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.forget_batch(
                ref, erasure_id=erasure_id, limit=limit, after_id=after_id, up_to_id=up_to_id
            )
        )

    async def erasures(self, *, limit: int = 100, ref: str | None = None) -> list[Erasure]:
        sync = self.sync
        return await self._thread.run(lambda: sync.erasures(limit=limit, ref=ref))

    async def retry_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        sync = self.sync
        return await self._thread.run(
            lambda: sync.retry_jobs(
                selection, now=now, limit=limit, after_id=after_id, up_to_id=up_to_id
            )
        )

    async def close(self) -> None:
        await self._thread.close(self.sync.close)
