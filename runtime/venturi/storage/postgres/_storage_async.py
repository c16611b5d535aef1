"""``AsyncPostgresStorage``: the worker's storage and ``AsyncQueue``'s, for asyncio code.

Producer and operator operations are the ``Steps`` of ``_producer``,
``_operator`` and ``_schema``, run on a ``psycopg_pool.AsyncConnectionPool`` of
autocommit connections: an enqueue without dedup keys is exactly one round
trip and one commit; operations of several statements run in an explicit
transaction. A lost connection (a server restart, a killed backend) is
retried with backoff where that cannot apply work twice (see ``_retry``).
``enqueue(conn=...)`` runs on the application's own ``psycopg.AsyncConnection``
instead, inside its transaction.

The worker's hot path does not touch the pool: claims and completions each
have a dedicated connection (so a flush never waits behind a claim), and
LISTEN has a third (``_listener``).

Times: every time this backend compares or stores comes from the caller
(``now=``, the run and lease times the worker computes), never from the
server's clock, exactly as in the SQLite backend. Hosts should keep their
clocks in sync (NTP); a skew far smaller than the lease duration is harmless.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from time import monotonic
from typing import Any, TypeGuard, TypeVar

import psycopg
from psycopg import pq
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from venturi.errors import BackendUnavailable, ConfigurationError
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
from venturi.storage._app_connection import application_connection
from venturi.storage._erasure_types import Erasure, ForgetBatch
from venturi.storage._overview import EXACT_UP_TO
from venturi.storage._overview_types import DeadGroups, JobLease, LeaseHolder, Overview
from venturi.storage._run_types import ClaimedJob, ClaimLimit, ClaimRequest, Resolution, RunResult
from venturi.storage._types import (
    EnqueueOutcome,
    EnqueueRequest,
    EnqueueResult,
    JobState,
    NewJob,
    StoredJob,
)
from venturi.storage.postgres import (
    _backlog,
    _erasure,
    _leases,
    _operator,
    _overview,
    _producer,
    _queues,
    _rate_claim,
    _schedules,
    _schema,
)
from venturi.storage.postgres._claimed import (
    claimed,
    in_claim_order,
    journal_request,
    missing_row_keys,
    with_row_keys,
)
from venturi.storage.postgres._completions import CompletionListener, wait_listening
from venturi.storage.postgres._config import (
    CAPABILITIES,
    DEFAULT_RECONNECT_TIMEOUT,
    DEFAULT_RETENTION,
    parse,
    queries,
)
from venturi.storage.postgres._dedicated import Dedicated
from venturi.storage.postgres._listener import Listener
from venturi.storage.postgres._plain_completions import plain_completion_params
from venturi.storage.postgres._retry import Backoff, closed_error, is_retryable, translated
from venturi.storage.postgres._rows import (
    aware,
    dumps,
    finish_params,
    job_params,
    journal_from_json,
    tolerate_deep_json_async,
)
from venturi.storage.postgres._run_steps_async import run_steps
from venturi.storage.postgres._steps import Steps, trusted

T = TypeVar("T")

#: How long ``_insert_plain`` keeps its parked connection before it hands it back to the
#: pool and takes one again: the pool cannot expire (max_lifetime) or drain a connection
#: it never sees, so it sees this one once a minute.
PARKED_S = 60.0


class _Parked:
    """The slot of ``_insert_plain``'s parked connection: a pool connection with its cursor
    (``held``), kept out of the pool between single enqueues, or none yet.

    There is one slot per storage (none with a pool of one connection, which it would
    starve). It is taken with ``list.pop()`` and given back with ``append()``, both atomic
    under the GIL, so one call at a time has it; a concurrent call finds the list empty
    and takes a connection from the pool, as every call did before.
    """

    __slots__ = ("held", "until")

    def __init__(self) -> None:
        self.held: tuple[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any]] | None = None
        self.until = 0.0  # monotonic(): past it, the connection goes back to the pool


class AsyncPostgresStorage:
    """The PostgreSQL backend's ``AsyncStorage`` and ``AsyncNotifier``.

    ``url`` is a ``postgresql://`` URL; ``schema`` (else the URL's
    ``venturi_schema`` parameter, else ``venturi``) names the PostgreSQL
    schema holding venturi's tables. ``pool_size`` bounds the connections
    of the pool (with two or more, single enqueues keep one of them for
    themselves: ``_insert_plain``); ``reconnect_timeout`` bounds how long an
    operation keeps retrying while the server is unreachable.
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        pool_size: int = 10,
        retention: timedelta = DEFAULT_RETENTION,
        reconnect_timeout: timedelta = DEFAULT_RECONNECT_TIMEOUT,
    ) -> None:
        self.settings = parse(url, schema)
        self._queries = queries(self.settings)
        self._retention = retention
        self._reconnect_s = reconnect_timeout.total_seconds()
        self._pool_size = max(1, pool_size)
        self._parked = [_Parked()] if self._pool_size > 1 else []
        self._closed = False
        if True:  # ASYNC
            # A pool opens on a running event loop: on first use (_open_pool).
            self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] | None = None
            self._pool_lock = asyncio.Lock()
            conninfo = self.settings.conninfo_for
            self.claims = Dedicated(
                conninfo("venturi-claim"), reconnect_timeout_s=self._reconnect_s
            )
            self.completions = Dedicated(
                conninfo("venturi-complete"), reconnect_timeout_s=self._reconnect_s
            )
            self.listener = Listener(conninfo("venturi-listen"), self.settings.channel)
            # Opened by the first wait() only: a worker never waits, so never listens.
            self.ended = CompletionListener(conninfo("venturi-wait"), self.settings.done_channel)
        else:
            self._pool = self._new_pool()
            self._pool.open(wait=False)

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def _new_pool(self) -> AsyncConnectionPool[psycopg.AsyncConnection[Any]]:
        return AsyncConnectionPool(
            self.settings.conninfo_for("venturi-producer"),
            min_size=1,
            max_size=self._pool_size,
            kwargs={"autocommit": True},
            configure=tolerate_deep_json_async,
            timeout=min(5.0, self._reconnect_s),
            open=False,
            name=f"venturi-{self.settings.schema}",
        )

    async def _open_pool(  # async-only
        self,
    ) -> AsyncConnectionPool[psycopg.AsyncConnection[Any]]:
        async with self._pool_lock:
            if self._closed:
                raise closed_error()  # not opened again behind its owner's back
            if self._pool is None:
                pool = self._new_pool()
                await pool.open(wait=False)
                self._pool = pool
            return self._pool

    async def open(self) -> None:
        """Open the connection pool now and wait for its first connection, so that the first
        call (a web app's first request) does not pay for it. ``BackendUnavailable`` when
        the server cannot be reached within the pool's timeout. Calls open it anyway."""
        if True:  # ASYNC
            pool = self._pool or await self._open_pool()
        else:
            pool = self._pool
        try:
            await pool.wait(timeout=min(5.0, self._reconnect_s))
        except PoolTimeout as exc:
            raise BackendUnavailable(
                f"could not open a connection to PostgreSQL within "
                f"{min(5.0, self._reconnect_s):g} s ({exc}); is the server up and the URL right?"
            ) from exc

    async def _run(
        self,
        make: Callable[[], Steps[T]],
        *,
        what: str,
        atomic: bool = True,
        again: Callable[[], Steps[T]] | None = None,
    ) -> T:
        """Run fresh ``make()`` steps on a pooled connection, in a transaction when
        ``atomic``, retrying while the failure left nothing applied. Steps that are
        not ``atomic`` must be one statement, idempotent or made so for retries by
        ``again`` (used instead of ``make`` after the first attempt)."""
        if True:  # ASYNC
            pool = self._pool or await self._open_pool()
        else:
            pool = self._pool
        backoff = Backoff(self._reconnect_s, what)
        while True:
            body_done = False
            try:
                async with pool.connection() as conn:
                    if not atomic:
                        return await run_steps(conn, make())
                    async with conn.transaction():
                        result = await run_steps(conn, make())
                        body_done = True  # from here on a failure is the COMMIT's
                    return result
            except psycopg.Error as exc:
                if body_done or not is_retryable(exc):
                    clearer = translated(exc, self.settings.schema)
                    if clearer is exc:
                        raise
                    raise clearer from exc
                make = again or make
                await asyncio.sleep(backoff.after(exc))

    # -- schema ------------------------------------------------------------------

    async def migrate(self) -> int:
        return await self._run(
            lambda: _schema.migrate(self._queries, self.settings), what="migrate"
        )

    async def schema_version(self) -> int:
        return await self._run(
            lambda: _schema.read_version(self._queries, self.settings),
            what="read the schema version",
            atomic=False,
        )

    # -- producer ------------------------------------------------------------------

    async def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]:
        if conn is not None:
            return await enqueue_in(conn, self._queries, list(requests))
        if (
            isinstance(requests, list)
            and len(requests) == 1
            and requests[0].job.dedup_key is None
            and requests[0].job.rate_key is None
        ):
            return [await self._insert_plain(requests[0].job)]  # Queue.enqueue's common case
        plan = _producer.plan(requests)
        if plan is None:
            return []
        if (single := plan.alone) is not None:
            alone = await self._run(
                lambda: _producer.insert_alone(self._queries, single),
                what="enqueue",
                atomic=False,
            )
            if alone is not None:
                return [alone]
            return await self._run(
                lambda: _producer.enqueue(self._queries, plan.requests, merge_first=True),
                what="enqueue",
            )
        how = {"pipelined": plan.pipelined, "own_transaction": plan.own_transaction}
        return await self._run(
            lambda: _producer.enqueue(self._queries, plan.requests, **how),
            what="enqueue",
            atomic=plan.atomic,
            again=lambda: _producer.enqueue(self._queries, plan.requests, again=True, **how),
        )

    async def _insert_plain(self, job: NewJob) -> EnqueueResult:
        """One job without a dedup key: one autocommit statement, sent as it is, without
        the steps of ``_run`` (no plan, no steps generator, no rows read back). That
        client work is on the path of every single enqueue, and costs about as much as
        the round trip itself (docs/benchmarks.md). It runs on the parked connection
        (``_insert_parked``) when no other call has it, else on one from the pool. A
        retryable failure is retried as ``_run`` does, on a connection from the pool,
        with ``insert_job_again``: a lost reply may hide a committed insert."""
        if True:  # ASYNC
            pool = self._pool or await self._open_pool()
        else:
            pool = self._pool
        sql = self._queries["insert_job"]
        params = job_params(job)
        backoff: Backoff | None = None
        while True:
            try:
                if backoff is None and (slot := self._take_parked()) is not None:
                    await self._insert_parked(pool, slot, sql, params)
                else:
                    async with pool.connection() as conn, conn.cursor() as cur:
                        await cur.execute(trusted(sql), params)
                return EnqueueResult(job.id, EnqueueOutcome.INSERTED)
            except psycopg.Error as exc:
                if not is_retryable(exc):
                    clearer = translated(exc, self.settings.schema)
                    if clearer is exc:
                        raise
                    raise clearer from exc
                backoff = backoff or Backoff(self._reconnect_s, "enqueue")
                sql = self._queries["insert_job_again"]
                await asyncio.sleep(backoff.after(exc))

    def _take_parked(self) -> _Parked | None:
        try:
            return self._parked.pop()  # atomic under the GIL: a concurrent call finds none
        except IndexError:
            return None

    async def _insert_parked(
        self,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]],
        slot: _Parked,
        sql: str,
        params: dict[str, Any],
    ) -> None:
        """``sql`` on the slot's connection and cursor, taken from the pool first if it has
        none. Why: the pool's getconn and putconn (its locks, condition variable and
        bookkeeping) and a new cursor (whose adapters start cold) cost a third or more of
        the client CPU of a single enqueue: 68-97 µs per ``Queue.enqueue`` through the
        pool, 39-57 µs parked (commits not waited for, interleaved runs). The
        connection stays parked only while every statement succeeds and leaves it idle:
        after any failure (or interruption) it goes back to the pool, which checks it
        and replaces it if broken, and the caller's retry takes one from the pool."""
        try:
            if slot.held is not None and monotonic() >= slot.until:
                await self._unpark(pool, slot)  # for the pool to check, expire or keep
            if slot.held is None:
                conn = await pool.getconn()
                slot.held = conn, conn.cursor()
                slot.until = monotonic() + PARKED_S
            conn, cur = slot.held
            await cur.execute(trusted(sql), params)
            if conn.pgconn.transaction_status != pq.TransactionStatus.IDLE:
                await self._unpark(pool, slot)
        except BaseException:
            await self._unpark(pool, slot)
            raise
        finally:
            self._parked.append(slot)
            if self._closed:  # close() ran meanwhile and may have missed the slot
                await self._unpark_all(pool)

    async def _unpark(
        self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]], slot: _Parked
    ) -> None:
        held, slot.held = slot.held, None
        if held is not None:
            conn, cur = held
            await cur.close()
            await pool.putconn(conn)

    async def _unpark_all(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]]) -> None:
        """Give the parked connection back to the pool, for good (``close()``)."""
        while True:
            try:
                slot = self._parked.pop()
            except IndexError:
                return
            await self._unpark(pool, slot)

    # -- operator ------------------------------------------------------------------

    async def get(self, job_id: str) -> StoredJob | None:
        return await self._run(
            lambda: _operator.get(self._queries, job_id), what="read a job", atomic=False
        )

    async def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome:
        return await self._run(
            lambda: _operator.cancel(self._queries, job_id, now, self._retention), what="cancel"
        )

    async def wait(self, job_id: str, *, timeout: float) -> StoredJob | None:
        """Woken by the completion notification (see ``_completions``)."""
        if True:  # ASYNC
            return await self.ended.wait(job_id, timeout, lambda: self.get(job_id))
        else:
            return wait_listening(
                self._pool,
                self.settings.done_channel,
                job_id,
                timeout,
                lambda conn: run_steps(conn, _operator.get(self._queries, job_id)),
                lambda: self.get(job_id),
            )

    async def retry(self, job_id: str, *, now: datetime) -> bool:
        return await self._run(lambda: _operator.retry(self._queries, job_id, now), what="retry")

    async def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]:
        return await self._run(
            lambda: _operator.list_jobs(self._queries, job_filter), what="list jobs", atomic=False
        )

    async def stats(
        self, *, now: datetime, windows_minutes: Sequence[int] = (1, 5, 15)
    ) -> list[KindStats]:
        return await self._run(
            lambda: _operator.stats(self._queries, now, windows_minutes), what="read statistics"
        )

    async def prune(self, *, now: datetime, limit: int) -> int:
        return await self._run(lambda: _operator.prune(self._queries, now, limit), what="prune")

    async def reclaim_space(self) -> None:
        # VACUUM runs outside any transaction: one autocommit statement.
        await self._run(
            lambda: _operator.reclaim_space(self._queries), what="vacuum the job tables", atomic=False
        )

    async def pending_counts_by_kind(self, queues: Sequence[str] = ()) -> dict[str, int]:
        return await self._run(
            lambda: _operator.pending_counts_by_kind(self._queries, queues),
            what="count pending jobs",
            atomic=False,
        )

    async def rate_limit_use(self, *, now: datetime) -> list[RateLimitUse]:
        return await self._run(
            lambda: _operator.rate_limit_use(self._queries, now),
            what="read rate limits",
            atomic=False,
        )

    # -- periodic tasks ------------------------------------------------------------

    async def record_schedules(self, records: Sequence[ScheduleRecord], *, now: datetime) -> None:
        await self._run(
            lambda: _schedules.record(self._queries, records, now), what="record schedules"
        )

    async def enqueue_slot(
        self,
        schedule: str,
        slot: datetime,
        request: EnqueueRequest,
        *,
        catch_up: bool,
        now: datetime,
    ) -> EnqueueResult | None:
        return await self._run(
            lambda: _schedules.enqueue_slot(
                self._queries, schedule, slot, request, catch_up=catch_up, now=now
            ),
            what="enqueue a scheduled job",
        )

    async def schedules(self) -> list[ScheduleInfo]:
        return await self._run(
            lambda: _schedules.schedules(self._queries), what="list schedules", atomic=False
        )

    # -- queue controls and bulk operations ----------------------------------------

    async def pause_queue(self, queue: str, *, now: datetime, reason: str | None = None) -> bool:
        return await self._run(lambda: _queues.pause(self._queries, queue, now, reason), what="pause a queue")

    async def resume_queue(self, queue: str) -> bool:
        return await self._run(lambda: _queues.resume(self._queries, queue), what="resume a queue")

    async def queue_stats(self, *, now: datetime) -> list[QueueStats]:
        return await self._run(
            lambda: _queues.queue_stats(self._queries, now), what="read queue statistics"
        )

    async def count_jobs(self, selection: JobSelection) -> JobCount:
        return await self._run(
            lambda: _queues.count(self._queries, selection), what="count jobs", atomic=False
        )

    async def count_jobs_capped(self, selection: JobSelection, *, cap: int) -> JobCount:
        return await self._run(
            lambda: _queues.count_capped(self._queries, selection, cap), what="count jobs", atomic=False
        )

    async def cancel_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        return await self._run(
            lambda: _queues.cancel_batch(
                self._queries, selection, now=now, limit=limit, after_id=after_id,
                up_to_id=up_to_id, retention=self._retention,
            ),
            what="cancel jobs",
        )  # fmt: skip

    async def retry_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        return await self._run(
            lambda: _queues.retry_batch(
                self._queries, selection, now=now, limit=limit, after_id=after_id,
                up_to_id=up_to_id,
            ),
            what="retry jobs",
        )  # fmt: skip

    # -- erasure (Queue.forget) ------------------------------------------------------

    async def count_ref(self, ref: str) -> JobCount:
        return await self._run(
            lambda: _erasure.count(self._queries, ref), what="count an entity's jobs", atomic=False
        )

    async def open_erasure(self, ref: str, *, requested_by: str | None, now: datetime) -> int:
        return await self._run(
            lambda: _erasure.open_erasure(self._queries, ref, requested_by, now),
            what="record an erasure",
        )

    async def forget_batch(
        self, ref: str, *, erasure_id: int, limit: int, after_id: str | None, up_to_id: str
    ) -> ForgetBatch:
        return await self._run(
            lambda: _erasure.forget_batch(
                self._queries, ref, erasure_id=erasure_id, limit=limit, after_id=after_id,
                up_to_id=up_to_id,
            ),
            what="erase an entity's jobs",
        )  # fmt: skip

    async def erasures(self, *, limit: int = 100, ref: str | None = None) -> list[Erasure]:
        return await self._run(
            lambda: _erasure.erasures(self._queries, limit=limit, ref=ref),
            what="list erasures",
            atomic=False,
        )
    async def ready_counts_of_kinds(self, kinds: Sequence[str], *, now: datetime) -> dict[str, int]:
        if not kinds:
            return {}
        return await self._run(
            lambda: _operator.ready_counts_of_kinds(self._queries, kinds, now),
            what="count ready jobs",
            atomic=False,
        )

    # -- the dashboard -------------------------------------------------------------

    async def overview(self, *, now: datetime, exact_up_to: int = EXACT_UP_TO) -> Overview:
        return await self._run(
            lambda: _overview.overview(self._queries, now, exact_up_to),
            what="read the overview",
            atomic=False,  # reads only: no transaction's round trips, and a retry is harmless
        )

    async def dead_groups(self, *, exact_up_to: int = EXACT_UP_TO, limit: int = 100) -> DeadGroups:
        return await self._run(
            lambda: _overview.dead_groups(self._queries, exact_up_to, limit),
            what="group dead jobs",
            atomic=False,
        )

    async def lease_holders(self) -> list[LeaseHolder]:
        return await self._run(
            lambda: _overview.lease_holders(self._queries), what="list lease holders", atomic=False
        )

    async def job_lease(self, job_id: str) -> JobLease | None:
        return await self._run(
            lambda: _overview.job_lease(self._queries, job_id), what="read a lease", atomic=False
        )

    # -- the stored backlog ------------------------------------------------------

    async def backlog_size(self, states: Sequence[JobState]) -> tuple[int, str | None]:
        return await self._run(
            lambda: _backlog.size(self._queries, states), what="count the backlog", atomic=False
        )

    async def scan_backlog(
        self, states: Sequence[JobState], *, after: str, until: str, limit: int
    ) -> list[BacklogRow]:
        return await self._run(
            lambda: _backlog.scan(self._queries, states, after, until, limit), what="read the backlog"
        )

    async def rewrite_backlog(self, rewrites: Sequence[BacklogRewrite]) -> int:
        if not rewrites:
            return 0
        return await self._run(
            lambda: _backlog.rewrite(self._queries, rewrites), what="rewrite upgraded jobs"
        )

    # -- worker --------------------------------------------------------------------
    async def claim(  # async-only
        self, request: ClaimRequest, *, now: datetime
    ) -> list[ClaimedJob]:
        if request.limit <= 0 or not request.queues or not request.kinds:
            return []
        expires = now + request.lease_duration
        if request.limited():
            return await self._claim_limited(request, now, expires)
        params = {
            "now": aware(now), "queues": list(request.queues), "kinds": list(request.kinds),
            "limit": request.limit, "token": request.lease_token, "expires": expires,
            "worker": request.worker_id, "start": request.start,
        }  # fmt: skip
        claim_sql, journal_sql = self._queries["claim"], self._queries["journals_of_jobs"]

        async def op(conn: psycopg.AsyncConnection[Any]) -> list[ClaimedJob]:
            cur = conn.cursor()
            await cur.execute(trusted(claim_sql), params)
            leased = in_claim_order(await cur.fetchall())
            journals = {}
            if (wanted := journal_request(leased)) is not None:
                await cur.execute(trusted(journal_sql), wanted)
                journals = {seq: journal_from_json(items) for seq, items in await cur.fetchall()}
            return claimed(leased, journals, request.lease_token, expires)

        # A claim lost with its connection is simply made again; the lost
        # batch's leases expire and reclaim_expired hands those jobs back.
        return await self.claims.run(op, what="claim jobs")

    async def _claim_limited(  # async-only
        self, request: ClaimRequest, now: datetime, expires: datetime
    ) -> list[ClaimedJob]:
        """``claim`` with rate-limited kinds requested (``_rate_claim``), in one transaction."""
        journal_sql = self._queries["journals_of_jobs"]

        async def op(conn: psycopg.AsyncConnection[Any]) -> list[ClaimedJob]:
            try:
                leased = await run_steps(
                    conn, _rate_claim.claim(self._queries, request, now, expires)
                )
            except BaseException:
                if not conn.closed:
                    await conn.rollback()  # the steps' own BEGIN, without its COMMIT
                raise
            journals = {}
            if (wanted := journal_request(leased)) is not None:
                cur = conn.cursor()
                await cur.execute(trusted(journal_sql), wanted)
                journals = {seq: journal_from_json(items) for seq, items in await cur.fetchall()}
            return claimed(leased, journals, request.lease_token, expires)

        return await self.claims.run(op, what="claim rate-limited jobs")

    async def next_rate_slot(  # async-only
        self, limits: Sequence[ClaimLimit], *, now: datetime
    ) -> datetime | None:
        if not limits:
            return None
        return await self._run(
            lambda: _rate_claim.next_free(self._queries, limits, now),
            what="read rate limits",
            atomic=False,
        )

    async def finish(  # async-only
        self,
        results: Sequence[RunResult],
        *,
        now: datetime,
        started: Sequence[tuple[str, str]] = (),
    ) -> list[bool]:
        if started:
            await self._mark_started(started)
        if not results:
            return []
        first: list[bool] | None = None
        unique = results
        if len({result.job_id for result in results}) < len(results):
            # A second result for the same job in one batch meets a spent lease.
            first = []
            kept: list[RunResult] = []
            seen: set[str] = set()
            for result in results:
                first.append(result.job_id not in seen)
                if result.job_id not in seen:
                    seen.add(result.job_id)
                    kept.append(result)
            unique = kept
        held_keys = [
            {"i": r.job_id, "u": aware(r.unique_until).isoformat()}
            for r in unique
            if r.unique_until is not None and r.resolution is Resolution.COMPLETED
        ]
        statements = self._queries
        missing = missing_row_keys(unique)

        async def op(conn: psycopg.AsyncConnection[Any]) -> set[str]:
            cur = conn.cursor()
            keyed = unique
            if missing:  # results built without a claimed job: their rows found by id
                await cur.execute(trusted(statements["row_keys"]), {"ids": missing})
                keyed = with_row_keys(unique, dict(await cur.fetchall()))
            # A batch of plain completions, most flushes, goes without a document.
            params = plain_completion_params(keyed, aware(now))
            if params is None:
                params = finish_params(keyed, aware(now))
                sql = statements["end_runs"]
            else:
                sql = statements["complete_runs"]
            if held_keys:
                # Completions of tasks with a unique period hold their keys (unique_keys)
                # in the same transaction; every other batch stays one statement.
                async with conn.transaction():
                    await cur.execute(trusted(sql), params)
                    ended = {job_id for (job_id,) in await cur.fetchall() if job_id is not None}
                    record = statements["record_unique"]
                    await cur.execute(trusted(record), {"doc": dumps(held_keys)})
                return ended
            await cur.execute(trusted(sql), params)
            return {job_id for (job_id,) in await cur.fetchall() if job_id is not None}

        # One autocommit statement: retried after a lost connection, the fence
        # makes already-ended runs report False instead of ending twice.
        held = await self.completions.run(op, what="finish runs")
        if first is None:
            return [r.job_id in held for r in results]
        return [ok and r.job_id in held for ok, r in zip(first, results, strict=True)]

    async def _mark_started(self, leases: Sequence[tuple[str, str]]) -> None:  # async-only
        params = {"doc": dumps([{"id": job_id, "tok": token} for job_id, token in leases])}
        sql = self._queries["mark_started"]

        async def op(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute(trusted(sql), params)

        # Idempotent: retried after a lost connection like a heartbeat.
        await self.completions.run(op, what="mark runs started")

    async def heartbeat(  # async-only
        self, leases: Sequence[tuple[str, str]], *, lease_duration: timedelta, now: datetime
    ) -> set[str]:
        if not leases:
            return set()
        doc = dumps([{"id": job_id, "tok": token} for job_id, token in leases])
        params = {"doc": doc, "expires": aware(now) + lease_duration}
        sql = self._queries["extend_leases"]

        async def op(conn: psycopg.AsyncConnection[Any]) -> set[str]:
            cur = conn.cursor()
            await cur.execute(trusted(sql), params)
            return {job_id for (job_id,) in await cur.fetchall()}

        # On the completion connection: heartbeats are rare and tiny, and a
        # pool checkout would cost the worker a connection of its own.
        return await self.completions.run(op, what="extend leases")

    async def reclaim_expired(  # async-only
        self, *, now: datetime, limit: int, max_failures: int | None
    ) -> int:
        return await self._run(
            lambda: _leases.reclaim_expired(
                self._queries, now=now, limit=limit, max_failures=max_failures,
                retention=self._retention,
            ),
            what="reclaim expired leases",
        )  # fmt: skip

    async def wait_for_work(  # async-only
        self, queues: Sequence[str], timeout: float
    ) -> bool:
        return await self.listener.wait(queues, timeout)

    async def close(self) -> None:
        self._closed = True  # from here on a call that parks its slot again unparks it
        if True:  # ASYNC
            await self.listener.close()
            await self.ended.close()
            await self.claims.close()
            await self.completions.close()
            if self._pool is not None:
                await self._unpark_all(self._pool)
                await self._pool.close()
                self._pool = None
        else:
            self._unpark_all(self._pool)
            self._pool.close()


def _is_connection(value: object) -> TypeGuard[psycopg.AsyncConnection[Any]]:
    # Whatever its row factory: the steps use a cursor of their own.
    return isinstance(value, psycopg.AsyncConnection)


async def enqueue_in(
    conn: Any, queries: dict[str, str], requests: Sequence[EnqueueRequest]
) -> list[EnqueueResult]:
    """Enqueue on the application's connection, inside its transaction, never committing it.

    A savepoint makes the batch all or nothing without ending the caller's
    transaction. A connection outside autocommit that has not started its
    transaction yet is made to start it first: otherwise the block would be
    an outer transaction and commit the jobs on its own.
    """
    conn = application_connection(conn)  # Django's is unwrapped; psycopg2's refused
    if not _is_connection(conn):
        raise ConfigurationError(
            f"enqueue(conn=...) on an asynchronous queue needs a psycopg.AsyncConnection, got "
            f"{type(conn).__qualname__} (use Queue for a psycopg.Connection)"
        )
    if not conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE:
        await conn.execute("SELECT 1")  # psycopg opens the implicit transaction first
    async with conn.transaction():
        return await run_steps(
            conn, _producer.enqueue(queries, requests, pipelined=len(requests) > _producer.CHUNK)
        )
