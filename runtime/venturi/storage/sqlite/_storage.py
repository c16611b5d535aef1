"""``SqliteStorage``: the embedded backend, every operation synchronous.

One connection per storage object, serialised by a lock so that a ``Queue``
can be shared by the threads of a web server. Several processes (workers and
producers) may open the same file: every write is one ``BEGIN IMMEDIATE``
transaction taken with the retry loop of ``_connection``. Reads run in
autocommit mode and see the last committed state (WAL readers do not wait for
the writer; the rare ``SQLITE_BUSY`` a reader can meet is retried).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from venturi.errors import SchemaOutOfDate, StorageClosed, UnsupportedCapability, VenturiError
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
from venturi.storage._app_connection import ON_COMMIT, is_django_connection
from venturi.storage._erasure_types import Erasure, ForgetBatch
from venturi.storage._job_row import tolerant_text
from venturi.storage._overview import EXACT_UP_TO
from venturi.storage._overview_types import DeadGroups, JobLease, LeaseHolder, Overview
from venturi.storage._run_types import ClaimedJob, ClaimLimit, ClaimRequest, RunResult
from venturi.storage._sql import load_migrations, load_queries
from venturi.storage._types import EnqueueRequest, EnqueueResult, JobState, StoredJob
from venturi.storage._waiting import poll
from venturi.storage.sqlite import (
    _backlog,
    _careful,
    _claim,
    _erasure,
    _finish,
    _operator,
    _overview,
    _producer,
    _queues,
    _rate_claim,
    _schedules,
    _schema,
)
from venturi.storage.sqlite._connection import (
    Synchronous,
    connect,
    in_write_transaction,
    retry_busy,
    try_begin_immediate,
)
from venturi.storage.sqlite._rows import LAYOUTS

CAPABILITIES = Capabilities(
    name="sqlite",
    multi_host=False,
    listen_notify=False,
    transactional_enqueue=False,
    skip_locked=False,
    schema_version=load_migrations("venturi.storage.sqlite")[-1].version,
)

#: Retention of jobs that storage itself ends (operator cancel, backstop on lease expiry).
DEFAULT_RETENTION = timedelta(days=7)

_QUERIES = load_queries(_schema.PACKAGE, layouts=LAYOUTS)

T = TypeVar("T")


class SqliteStorage:
    """The SQLite backend: ``Storage`` plus the worker operations, synchronously.

    ``path`` is a file path (or ``":memory:"`` for a private throw-away
    database). ``synchronous="FULL"`` (the default) fsyncs every commit;
    ``"NORMAL"`` is several times faster for single enqueues but may lose the
    last transactions on power loss (never on a process crash).
    ``max_lock_wait`` bounds how long a write waits for another process's lock.
    """

    def __init__(
        self,
        path: str,
        *,
        synchronous: Synchronous = "FULL",
        max_lock_wait: timedelta = timedelta(seconds=30),
        retention: timedelta = DEFAULT_RETENTION,
    ) -> None:
        self.path = path
        self._synchronous: Synchronous = synchronous
        self._conn = connect(path, synchronous=synchronous)
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._closed = False
        self._max_wait_s = max_lock_wait.total_seconds()
        self._retention = retention
        self._queries = _QUERIES
        #: Whether the last claim leased as many jobs as it asked for (see ``claim``).
        self._last_claim_full = False

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def _write(self, work: Callable[[], T], careful: Callable[[], T] | None = None) -> T:
        """A ``BEGIN IMMEDIATE`` transaction, serialised with this object's other calls.

        If ``work`` meets a row that does not read (see ``_careful``), the
        transaction is rolled back and ``careful`` (else ``work`` again) runs in
        a new one, with a text factory that never fails.
        """
        return self._run(
            lambda task: in_write_transaction(self._conn, task, max_wait_s=self._max_wait_s),
            work,
            careful,
        )

    def _read(self, read: Callable[[], T], careful: Callable[[], T] | None = None) -> T:
        """A read outside any transaction: serialised, and retried on ``SQLITE_BUSY``;
        read again carefully (as ``_write``) if a row does not read."""
        return self._run(lambda task: retry_busy(task, max_wait_s=self._max_wait_s), read, careful)

    def _run(
        self,
        runner: Callable[[Callable[[], T]], T],
        work: Callable[[], T],
        careful: Callable[[], T] | None,
    ) -> T:
        if self._closed:
            raise _closed_error()
        if self._pid != os.getpid():
            self._reopen_after_fork()
        with self._lock:
            try:
                return runner(work)
            except sqlite3.OperationalError as exc:
                if not _undecodable(exc):
                    raise _schema_error(exc) from exc
            except VenturiError:
                raise
            except sqlite3.Error:
                raise
            except Exception:  # a value of another type than its column's, met in Python
                if careful is None:
                    raise
            self._conn.text_factory = tolerant_text
            try:
                return runner(careful or work)
            except sqlite3.OperationalError as exc:
                raise _schema_error(exc) from exc
            finally:
                self._conn.text_factory = str

    def _reopen_after_fork(self) -> None:
        """A forked child must not use (nor close) its parent's SQLite connection: open its own.

        This happens when an object made at import time crosses a pre-fork
        server's fork (gunicorn ``--preload``, multiprocessing ``fork``).
        """
        self._lock = threading.Lock()
        self._conn = connect(self.path, synchronous=self._synchronous)
        self._pid = os.getpid()

    def open(self) -> None:
        """The connection is opened by the constructor: check that the database answers."""
        self.schema_version()

    # -- schema ------------------------------------------------------------------

    def migrate(self) -> int:
        if self._closed:
            raise _closed_error()
        if self._pid != os.getpid():
            self._reopen_after_fork()
        with self._lock:
            return _schema.migrate(self._conn, self._queries, max_wait_s=self._max_wait_s)

    def schema_version(self) -> int:
        return self._read(lambda: _schema.read_version(self._conn, self._queries))

    # -- producer ------------------------------------------------------------------

    def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]:
        if conn is not None:
            raise UnsupportedCapability(
                "enqueue(conn=...) joins the application's own transaction, which only the "
                "PostgreSQL backend supports; the SQLite backend commits jobs in its own "
                "transaction. Call enqueue without conn, or use a postgresql:// database"
                + (f", {ON_COMMIT}." if is_django_connection(conn) else ".")
            )
        # Taken (and so encoded) before the write transaction: one process
        # works for both here, so there is nothing to overlap, and the
        # transaction holding the database's write lock stays short.
        batch = list(requests)
        if not batch:
            return []
        return self._write(lambda: _producer.enqueue(self._conn, self._queries, batch))

    def enqueue_if_free(self, batch: Sequence[EnqueueRequest]) -> list[EnqueueResult] | None:
        """``enqueue`` if it can run at once: no other call of this object in progress and
        the database's write lock free. None, having done nothing, when it would wait.

        ``AsyncSqliteStorage`` uses it to commit an uncontended enqueue on the caller's
        thread, and hands only the waits to its own thread.
        """
        if self._closed:
            raise _closed_error()
        if self._pid != os.getpid():
            self._reopen_after_fork()
        if not batch or not self._lock.acquire(blocking=False):
            return None
        try:
            try:
                if not try_begin_immediate(self._conn):
                    return None
                try:
                    result = _producer.enqueue(self._conn, self._queries, batch)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
                return result
            except sqlite3.OperationalError as exc:
                raise _schema_error(exc) from exc
        finally:
            self._lock.release()

    # -- operator ------------------------------------------------------------------

    def get(self, job_id: str) -> StoredJob | None:
        return self._read(lambda: _operator.get(self._conn, self._queries, job_id))

    def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome:
        return self._write(
            lambda: _operator.cancel(self._conn, self._queries, job_id, now, self._retention)
        )

    def wait(self, job_id: str, *, timeout: float) -> StoredJob | None:
        # No notifications in SQLite: read again, with backoff (see _waiting).
        return poll(lambda: self.get(job_id), timeout)

    def retry(self, job_id: str, *, now: datetime) -> bool:
        return self._write(lambda: _operator.retry(self._conn, self._queries, job_id, now))

    def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]:
        return self._read(lambda: _operator.list_jobs(self._conn, self._queries, job_filter))

    def stats(
        self, *, now: datetime, windows_minutes: Sequence[int] = (1, 5, 15)
    ) -> list[KindStats]:
        return self._read(lambda: _operator.stats(self._conn, self._queries, now, windows_minutes))

    def prune(self, *, now: datetime, limit: int) -> int:
        return self._write(lambda: _operator.prune(self._conn, self._queries, now, limit))

    def reclaim_space(self) -> None:
        """Nothing to do: SQLite puts a deleted row's pages on its free list and reuses them."""

    def pending_counts_by_kind(self, queues: Sequence[str] = ()) -> dict[str, int]:
        return self._read(
            lambda: _operator.pending_counts_by_kind(self._conn, self._queries, queues)
        )

    # -- periodic tasks ------------------------------------------------------------

    def record_schedules(self, records: Sequence[ScheduleRecord], *, now: datetime) -> None:
        self._write(lambda: _schedules.record(self._conn, self._queries, records, now))

    def enqueue_slot(
        self,
        schedule: str,
        slot: datetime,
        request: EnqueueRequest,
        *,
        catch_up: bool,
        now: datetime,
    ) -> EnqueueResult | None:
        return self._write(
            lambda: _schedules.enqueue_slot(
                self._conn, self._queries, schedule, slot, request, catch_up=catch_up, now=now
            )
        )

    def schedules(self) -> list[ScheduleInfo]:
        return self._read(lambda: _schedules.schedules(self._conn, self._queries))

    # -- queue controls and bulk operations ----------------------------------------

    def pause_queue(self, queue: str, *, now: datetime, reason: str | None = None) -> bool:
        return self._write(lambda: _queues.pause(self._conn, self._queries, queue, now, reason))

    def resume_queue(self, queue: str) -> bool:
        return self._write(lambda: _queues.resume(self._conn, self._queries, queue))

    def queue_stats(self, *, now: datetime) -> list[QueueStats]:
        return self._read(lambda: _queues.queue_stats(self._conn, self._queries, now))

    def count_jobs(self, selection: JobSelection) -> JobCount:
        return self._read(lambda: _queues.count(self._conn, self._queries, selection))

    def count_jobs_capped(self, selection: JobSelection, *, cap: int) -> JobCount:
        return self._read(lambda: _queues.count_capped(self._conn, self._queries, selection, cap))

    def cancel_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        return self._write(
            lambda: _queues.cancel_batch(
                self._conn, self._queries, selection, now=now, limit=limit,
                after_id=after_id, up_to_id=up_to_id, retention=self._retention,
            )
        )  # fmt: skip

    # -- erasure (Queue.forget) ------------------------------------------------------

    def count_ref(self, ref: str) -> JobCount:
        return self._read(lambda: _erasure.count(self._conn, self._queries, ref))

    def open_erasure(self, ref: str, *, requested_by: str | None, now: datetime) -> int:
        return self._write(
            lambda: _erasure.open_erasure(self._conn, self._queries, ref, requested_by, now)
        )

    def forget_batch(
        self, ref: str, *, erasure_id: int, limit: int, after_id: str | None, up_to_id: str
    ) -> ForgetBatch:
        return self._write(
            lambda: _erasure.forget_batch(
                self._conn, self._queries, ref, erasure_id=erasure_id, limit=limit,
                after_id=after_id, up_to_id=up_to_id,
            )
        )  # fmt: skip

    def erasures(self, *, limit: int = 100, ref: str | None = None) -> list[Erasure]:
        return self._read(lambda: _erasure.erasures(self._conn, self._queries, limit=limit, ref=ref))

    def retry_jobs(
        self,
        selection: JobSelection,
        *,
        now: datetime,
        limit: int,
        after_id: str | None,
        up_to_id: str,
    ) -> BulkBatch:
        return self._write(
            lambda: _queues.retry_batch(
                self._conn, self._queries, selection, now=now, limit=limit,
                after_id=after_id, up_to_id=up_to_id,
            )
        )  # fmt: skip
    def ready_counts_of_kinds(self, kinds: Sequence[str], *, now: datetime) -> dict[str, int]:
        if not kinds:
            return {}
        return self._read(
            lambda: _operator.ready_counts_of_kinds(self._conn, self._queries, kinds, now)
        )

    # -- the dashboard -------------------------------------------------------------

    def overview(self, *, now: datetime, exact_up_to: int = EXACT_UP_TO) -> Overview:
        """Counted exactly whatever ``exact_up_to`` says: see ``sqlite/_overview.py``."""
        return self._read(lambda: _overview.overview(self._conn, self._queries, now))

    def dead_groups(self, *, exact_up_to: int = EXACT_UP_TO, limit: int = 100) -> DeadGroups:
        return self._read(lambda: _overview.dead_groups(self._conn, self._queries, limit))

    def lease_holders(self) -> list[LeaseHolder]:
        return self._read(lambda: _overview.lease_holders(self._conn, self._queries))

    def job_lease(self, job_id: str) -> JobLease | None:
        return self._read(lambda: _overview.job_lease(self._conn, self._queries, job_id))

    # -- the stored backlog ------------------------------------------------------

    def backlog_size(self, states: Sequence[JobState]) -> tuple[int, str | None]:
        return self._read(lambda: _backlog.size(self._conn, self._queries, states))

    def scan_backlog(
        self, states: Sequence[JobState], *, after: str, until: str, limit: int
    ) -> list[BacklogRow]:
        return self._read(
            lambda: _backlog.scan(self._conn, self._queries, states, after, until, limit)
        )

    def rewrite_backlog(self, rewrites: Sequence[BacklogRewrite]) -> int:
        if not rewrites:
            return 0
        return self._write(lambda: _backlog.rewrite(self._conn, self._queries, rewrites))

    # -- worker --------------------------------------------------------------------

    def claim(self, request: ClaimRequest, *, now: datetime) -> list[ClaimedJob]:
        # An idle worker polls often: look before taking the write lock, so that
        # polling never makes a producer's BEGIN IMMEDIATE wait. After a full batch
        # there is most likely more: the look is skipped (its read, and the wait
        # for the GIL after it, cost a busy worker about 1-2 µs per job).
        if not self._last_claim_full and not self._read(
            lambda: _claim.any_ready(self._conn, self._queries, request, now)
        ):
            return []
        work, careful = self._claim_work(request, now)
        jobs = self._write(work, careful)
        self._last_claim_full = len(jobs) >= request.limit > 0
        return jobs

    def finish_and_claim(
        self,
        results: Sequence[RunResult],
        *,
        now: datetime,
        started: Sequence[tuple[str, str]] = (),
        take_claim: Callable[[], tuple[ClaimRequest, datetime] | None],
    ) -> tuple[list[bool], list[ClaimedJob] | None]:
        """``finish``, and in the same transaction the claim ``take_claim`` hands over
        once the results are applied (a request and its ``now``; None: no claim). One
        commit, one fsync, for both (see ``_worker_writes``); the claim sees what the
        results just did (a retry due at once, a concurrency key set free).

        The claimed jobs, or None when no claim was taken or the claim failed: it is
        then rolled back alone (the results stay) and is to be made again by ``claim``,
        which reads a row that does not read carefully. ``take_claim`` may be called
        again if the transaction is retried, and must then hand over the same claim.
        """
        conn, queries = self._conn, self._queries

        def work() -> tuple[list[bool], list[ClaimedJob] | None]:
            held = _finish.finish(conn, queries, results, now, started)
            if conn.text_factory is not str:
                # Made again after a row that did not read: the claim goes alone, where
                # such a row is read carefully and ended, never handed out half read.
                return held, None
            asked = take_claim()
            if asked is None:
                return held, None
            request, claim_now = asked
            claim_work, _ = self._claim_work(request, claim_now)
            conn.execute("SAVEPOINT claim")
            try:
                jobs = claim_work()
            except Exception:
                conn.execute("ROLLBACK TO claim")
                conn.execute("RELEASE claim")
                return held, None
            conn.execute("RELEASE claim")
            self._last_claim_full = len(jobs) >= request.limit > 0
            return held, jobs

        return self._write(work)

    def _claim_work(
        self, request: ClaimRequest, now: datetime
    ) -> tuple[Callable[[], list[ClaimedJob]], Callable[[], list[ClaimedJob]]]:
        """The claim's statements inside a write transaction, and their careful twin (run
        instead after a row that does not read)."""
        conn, queries, retention = self._conn, self._queries, self._retention
        if request.limited():
            # Rate-limited kinds among those requested: the claim that takes slots. Its
            # fallback, after a row that does not read, claims the other kinds carefully.
            return (
                lambda: _rate_claim.claim(conn, queries, request, now),
                lambda: _careful.claim(conn, queries, _without_limited(request), now, retention),
            )
        return (
            lambda: _claim.claim(conn, queries, request, now),
            lambda: _careful.claim(conn, queries, request, now, retention),
        )

    def next_rate_slot(self, limits: Sequence[ClaimLimit], *, now: datetime) -> datetime | None:
        if not limits:
            return None
        return self._read(lambda: _rate_claim.next_free(self._conn, self._queries, limits, now))

    def rate_limit_use(self, *, now: datetime) -> list[RateLimitUse]:
        return self._read(lambda: _rate_claim.use(self._conn, self._queries, now))

    def finish(
        self,
        results: Sequence[RunResult],
        *,
        now: datetime,
        started: Sequence[tuple[str, str]] = (),
    ) -> list[bool]:
        if not results and not started:
            return []
        return self._write(
            lambda: _finish.finish(self._conn, self._queries, results, now, started)
        )

    def heartbeat(
        self, leases: Sequence[tuple[str, str]], *, lease_duration: timedelta, now: datetime
    ) -> set[str]:
        if not leases:
            return set()
        return self._write(
            lambda: _claim.heartbeat(self._conn, self._queries, leases, lease_duration, now)
        )

    def reclaim_expired(self, *, now: datetime, limit: int, max_failures: int | None) -> int:
        conn, queries, retention = self._conn, self._queries, self._retention
        return self._write(
            lambda: _finish.reclaim_expired(
                conn, queries, now=now, limit=limit, max_failures=max_failures, retention=retention
            ),
            lambda: _careful.reclaim_expired(
                conn, queries, now=now, limit=limit, max_failures=max_failures, retention=retention
            ),
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._conn.close()


def _closed_error() -> StorageClosed:
    return StorageClosed(
        "this SQLite storage is closed (close() or the end of its with block); "
        "open a new Queue or storage"
    )


def _undecodable(exc: sqlite3.OperationalError) -> bool:
    """The sqlite3 module's own error for a TEXT value that is not valid UTF-8."""
    return str(exc).startswith("Could not decode to UTF-8")


def _schema_error(exc: sqlite3.OperationalError) -> Exception:
    """A missing table means the database was never migrated: say what to do."""
    if "no such table" in str(exc):
        return SchemaOutOfDate(
            f"the venturi tables are missing ({exc}); run `venturi migrate`, or open the "
            "queue with migrate=True (an AsyncQueue migrates in `await queue.open()` or "
            "`async with`)"
        )
    return exc


def _without_limited(request: ClaimRequest) -> ClaimRequest:
    """``request`` for its kinds without a rate limit."""
    limited = {kind for limit in request.limited() for kind in limit.kinds}
    kinds = tuple(kind for kind in request.kinds if kind not in limited)
    return replace(request, kinds=kinds, rate_limits=())
