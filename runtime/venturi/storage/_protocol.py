"""The narrow storage interface, named after what the runtime needs.

Two protocols: ``Storage`` for producers and operator tools in sync code
(web apps, the ``venturi`` CLI), and ``AsyncStorage`` (async) for the worker and
``AsyncQueue``. Each backend implements both; the conformance suite in
``tests/conformance`` runs unchanged against every backend.

Every mutation that ends a run (``finish``) or extends it (``heartbeat``) is
fenced by the lease token: a stale worker can never overwrite a newer run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from venturi.storage._admin_types import (
    BacklogRewrite,
    BacklogRow,
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
from venturi.storage._overview import EXACT_UP_TO
from venturi.storage._overview_types import DeadGroups, JobLease, LeaseHolder, Overview
from venturi.storage._run_types import ClaimedJob, ClaimLimit, ClaimRequest, RunResult
from venturi.storage._types import EnqueueRequest, EnqueueResult, JobState, StoredJob


class Storage(Protocol):
    """Producer and operator operations for synchronous code."""

    @property
    def capabilities(self) -> Capabilities: ...

    def open(self) -> None:
        """Open connections now (else the first call does), so that a web app pays for them
        at start-up; ``BackendUnavailable`` when the database cannot be reached."""
        ...

    def migrate(self) -> int:
        """Apply pending migrations; return the schema version now in place."""
        ...

    def schema_version(self) -> int:
        """The applied schema version (0 for an empty database)."""
        ...

    def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]:
        """Insert or merge each request atomically, in order; all or nothing.

        ``requests`` may be lazy (``Queue.enqueue_many`` passes a
        ``RequestBatch`` whose tasks are encoded as they are taken, so a backend
        can overlap encoding with its own work): an error raised while taking
        them must leave nothing enqueued.

        ``conn`` joins the application's own open transaction where the
        backend has the ``transactional_enqueue`` capability.
        """
        ...

    def get(self, job_id: str) -> StoredJob | None:
        """One job with its journal."""
        ...

    def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome:
        """Cancel a pending job, or revoke the lease of a running one."""
        ...

    def wait(self, job_id: str, *, timeout: float) -> StoredJob | None:
        """The job once it has ended (completed, dead or cancelled), or as it is when
        ``timeout`` seconds have passed; None if there is no such job. PostgreSQL wakes
        on the completion notification, SQLite reads again with backoff."""
        ...

    def retry(self, job_id: str, *, now: datetime) -> bool:
        """Send a dead or cancelled job back to pending; False if it is not in such a state."""
        ...

    def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]:
        """Jobs newest first, without their journal."""
        ...

    def stats(self, *, now: datetime, windows_minutes: Sequence[int] = (1, 5, 15)) -> list[KindStats]:
        ...

    def pending_counts_by_kind(self) -> dict[str, int]:
        """Pending jobs per kind."""
        ...

    def rate_limit_use(self, *, now: datetime) -> list[RateLimitUse]:
        """Every rate limit key a claim has used, with how many of its slots were taken
        within its current window."""
        ...

    def prune(self, *, now: datetime, limit: int) -> int:
        """Delete at most ``limit`` terminal jobs whose retention has passed; return how many."""
        ...

    def reclaim_space(self) -> None:
        """Make the room of deleted and superseded rows reusable now, after a large prune.

        PostgreSQL keeps every row version a claim, a completion or a prune left
        behind until a VACUUM; without one (autovacuum comes a minute later at
        the earliest, or never where it is off) each round of jobs is written into
        new pages and the tables grow round after round. SQLite reuses its free
        pages as they are and does nothing here."""
        ...

    # -- periodic tasks ---------------------------------------------------------

    def record_schedules(self, records: Sequence[ScheduleRecord], *, now: datetime) -> None:
        """Store what a worker says of its schedules (for ``venturi stats``)."""
        ...

    def enqueue_slot(
        self,
        schedule: str,
        slot: datetime,
        request: EnqueueRequest,
        *,
        catch_up: bool,
        now: datetime,
    ) -> EnqueueResult | None:
        """Enqueue ``request`` as ``slot``'s job, in one transaction with the slot's row,
        unless the slot has its job already (then None): exactly once per slot.

        ``catch_up`` (a missed slot, policy ``latest``): only if the schedule enqueued
        a slot before and none at or after this one since.
        """
        ...

    def schedules(self) -> list[ScheduleInfo]:
        """Every schedule workers registered, with its next slot and last enqueued one."""
        ...

    # -- queue controls and bulk operations ------------------------------------

    def pause_queue(self, queue: str, *, now: datetime, reason: str | None = None) -> bool:
        """Stop every worker claiming from ``queue`` (persisted); False if already paused.

        The claim leaves paused queues out in its own transaction; enqueueing
        still works and running jobs finish.
        """
        ...

    def resume_queue(self, queue: str) -> bool:
        """Let workers claim from ``queue`` again; False if it was not paused."""
        ...

    def queue_stats(self, *, now: datetime) -> list[QueueStats]:
        """Every queue with pending or running jobs, or paused, by name."""
        ...

    def count_jobs(self, selection: JobSelection) -> JobCount:
        """How many jobs ``selection`` matches (its ``states`` are never empty), by state."""
        ...

    def count_jobs_capped(self, selection: JobSelection, *, cap: int) -> JobCount:
        """``count_jobs`` of the newest ``cap`` selected jobs at most: a total of ``cap``
        means "at least that many". ``last_id`` is the greatest selected id all the same."""
        ...

    def cancel_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        """Cancel the next ``limit`` selected jobs with ids in (``after_id``, ``up_to_id``],
        in id order, in one transaction (selected states: pending and/or running)."""
        ...

    def retry_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        """``cancel_jobs`` for sending dead or cancelled jobs back to pending."""
        ...

    # -- erasure (Queue.forget; storage/_erasure_types.py) ----------------------------

    def count_ref(self, ref: str) -> JobCount:
        """How many jobs refer to ``ref`` (``entity=value``), by state, found by its index."""
        ...

    def open_erasure(self, ref: str, *, requested_by: str | None, now: datetime) -> int:
        """Write an erasure's audit record, nothing erased yet, in its own transaction; its id."""
        ...

    def forget_batch(
        self, ref: str, *, erasure_id: int, limit: int, after_id: str | None, up_to_id: str
    ) -> ForgetBatch:
        """Delete the next ``limit`` jobs referring to ``ref`` with ids in (``after_id``,
        ``up_to_id``], whatever their state, with their journal and side rows, and add
        the counts to the erasure's record, in one transaction."""
        ...

    def erasures(self, *, limit: int = 100, ref: str | None = None) -> list[Erasure]:
        """The newest ``limit`` audit records (of ``ref`` only, when given)."""
        ...

    # -- the dashboard (venturi dashboard) ---------------------------------------

    def overview(self, *, now: datetime, exact_up_to: int = EXACT_UP_TO) -> Overview:
        """Every queue with jobs that may still run, or dead ones, or paused: its jobs by
        state, its oldest ready job, its pause; and the jobs finished per minute over the
        last hour. Exact up to ``exact_up_to`` jobs in the table, else from a sample of
        its pages (``Overview.basis`` says which; ``storage/_overview_types.py``)."""
        ...

    def dead_groups(self, *, exact_up_to: int = EXACT_UP_TO, limit: int = 100) -> DeadGroups:
        """Dead jobs by error code, the largest ``limit`` groups, counted as ``overview``."""
        ...

    def lease_holders(self) -> list[LeaseHolder]:
        """The workers holding leases now (running jobs), by worker id."""
        ...

    def job_lease(self, job_id: str) -> JobLease | None:
        """Who holds (or last held) the job's lease; None if there is no such job."""
        ...

    # -- the stored backlog (venturi check-backlog) --------------------------------

    def backlog_size(self, states: Sequence[JobState]) -> tuple[int, str | None]:
        """How many jobs are in ``states``, and the greatest of their ids (None: no job)."""
        ...

    def scan_backlog(
        self, states: Sequence[JobState], *, after: str, until: str, limit: int
    ) -> list[BacklogRow]:
        """Up to ``limit`` jobs in ``states`` with ``after < id <= until``, by id, read in
        a read-only transaction where the backend has one: one bounded batch of a scan."""
        ...

    def rewrite_backlog(self, rewrites: Sequence[BacklogRewrite]) -> int:
        """Write upgraded (or re-encrypted) payloads, carries and outputs in one
        transaction, each only to a job that is not running and still has the version
        (and, when given, the text) that was read; return how many jobs changed."""
        ...

    def close(self) -> None: ...


class AsyncStorage(Protocol):
    """Everything the worker and ``AsyncQueue`` need, for asyncio code."""

    @property
    def capabilities(self) -> Capabilities: ...

    async def open(self) -> None:
        """Open connections (and threads) now rather than at the first call."""
        ...

    async def migrate(self) -> int: ...

    async def schema_version(self) -> int: ...

    async def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]: ...

    async def get(self, job_id: str) -> StoredJob | None: ...

    async def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome: ...

    async def wait(self, job_id: str, *, timeout: float) -> StoredJob | None: ...

    async def retry(self, job_id: str, *, now: datetime) -> bool: ...

    async def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]: ...

    async def prune(self, *, now: datetime, limit: int) -> int: ...

    async def reclaim_space(self) -> None: ...

    async def record_schedules(self, records: Sequence[ScheduleRecord], *, now: datetime) -> None: ...

    async def enqueue_slot(
        self,
        schedule: str,
        slot: datetime,
        request: EnqueueRequest,
        *,
        catch_up: bool,
        now: datetime,
    ) -> EnqueueResult | None: ...

    async def schedules(self) -> list[ScheduleInfo]: ...

    async def pause_queue(self, queue: str, *, now: datetime, reason: str | None = None) -> bool: ...

    async def resume_queue(self, queue: str) -> bool: ...

    async def queue_stats(self, *, now: datetime) -> list[QueueStats]: ...

    async def count_jobs(self, selection: JobSelection) -> JobCount: ...

    async def cancel_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch: ...

    async def retry_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch: ...

    async def count_ref(self, ref: str) -> JobCount: ...

    async def open_erasure(self, ref: str, *, requested_by: str | None, now: datetime) -> int: ...

    async def forget_batch(
        self, ref: str, *, erasure_id: int, limit: int, after_id: str | None, up_to_id: str
    ) -> ForgetBatch: ...

    async def erasures(self, *, limit: int = 100, ref: str | None = None) -> list[Erasure]: ...

    # -- worker side -----------------------------------------------------------

    async def claim(self, request: ClaimRequest, *, now: datetime) -> list[ClaimedJob]:
        """Lease up to ``request.limit`` ready jobs: priority desc, run_at, id.

        Ready means pending with ``run_at <= now``, in one of the requested
        queues and kinds, and no running job holds its concurrency key (nor
        does another job claimed in the same batch). A job of a kind in
        ``request.rate_limits`` also needs a free slot of its limit key, which
        the claim takes; it is claimed only to start at once (among the first
        ``request.start``, ahead of the others).
        """
        ...

    async def next_rate_slot(
        self, limits: Sequence[ClaimLimit], *, now: datetime
    ) -> datetime | None:
        """When a key of ``limits`` whose slots are all taken within its period has a free
        slot again (the soonest); None when none is full. A claimer whose claim came back
        short with limited kinds requested sleeps until then, not a poll interval."""
        ...

    async def rate_limit_use(self, *, now: datetime) -> list[RateLimitUse]: ...

    async def finish(
        self,
        results: Sequence[RunResult],
        *,
        now: datetime,
        started: Sequence[tuple[str, str]] = (),
    ) -> list[bool]:
        """Apply run results in one transaction; per result, whether its fence held.

        ``started`` lists (job_id, lease_token) of runs that began and are still going:
        their jobs are marked as started, so that if their lease expires the run
        counts (``reclaim_expired``); a job whose lease expires unmarked never
        started, and goes back without counting a run or a failure.
        """
        ...

    async def heartbeat(
        self, leases: Sequence[tuple[str, str]], *, lease_duration: timedelta, now: datetime
    ) -> set[str]:
        """Extend the given (job_id, lease_token) leases; return the ids still held.

        A job missing from the result lost its lease (expired and reclaimed,
        or cancelled): its handler must be told to stop.
        """
        ...

    async def reclaim_expired(
        self, *, now: datetime, limit: int, max_failures: int | None
    ) -> int:
        """Return running jobs whose lease expired to pending (a failure, code
        ``lease_expired``), or to dead once ``max_failures`` is reached. A job never
        marked as started (see ``finish``) goes back ``RETURNED``: no run, no failure.

        ``now`` is the caller's clock when it asked. A pass that can only start more
        than ``RECLAIM_START_WINDOW`` (1 s) later — it waited for a write lock or a
        connection — reclaims nothing and returns 0: the wait that held it up most
        likely kept the leases' owners from renewing them (``storage/_expiry.py``)."""
        ...

    async def pending_counts_by_kind(self, queues: Sequence[str] = ()) -> dict[str, int]:
        """Pending jobs per kind in ``queues`` (all queues when empty), so a worker can
        report the kinds it would claim from its queues but has no handler for."""
        ...

    async def ready_counts_of_kinds(self, kinds: Sequence[str], *, now: datetime) -> dict[str, int]:
        """Ready jobs (pending and due by ``now``) of the given kinds, per kind (those with
        none are left out): a starting worker reports what waits under its aliases."""
        ...

    async def close(self) -> None: ...


class AsyncNotifier(Protocol):
    """Optional capability (``capabilities.listen_notify``): wake idle workers at once."""

    async def wait_for_work(self, queues: Sequence[str], timeout: float) -> bool:
        """Wait until a job may be ready in ``queues`` or ``timeout`` seconds pass.

        Returns True when woken by a notification, False on timeout.
        """
        ...
