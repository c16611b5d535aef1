"""``PostgresStorage``: producers and operator tools in synchronous code.

Connections come from a ``psycopg_pool.ConnectionPool`` in autocommit mode,
so an enqueue without dedup keys is exactly one round trip and one commit;
operations of several statements run in an explicit transaction. A lost
connection (a server restart, a killed backend) is retried with backoff
where that cannot apply work twice (see ``_retry``). ``enqueue(conn=...)``
runs on the application's own ``psycopg.Connection`` instead, inside its
transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg
from psycopg import pq
from psycopg_pool import ConnectionPool

from venturi.errors import ConfigurationError
from venturi.storage._types import (
    CancelOutcome,
    Capabilities,
    EnqueueRequest,
    EnqueueResult,
    JobFilter,
    KindStats,
    StoredJob,
)
from venturi.storage.postgres import _operator, _producer, _schema
from venturi.storage.postgres._config import (
    CAPABILITIES,
    DEFAULT_RECONNECT_TIMEOUT,
    DEFAULT_RETENTION,
    parse,
    queries,
)
from venturi.storage.postgres._retry import Backoff, is_retryable, translated
from venturi.storage.postgres._steps import Steps, run_sync

T = TypeVar("T")


class PostgresStorage:
    """The PostgreSQL backend's ``Storage``.

    ``url`` is a ``postgresql://`` URL; ``schema`` (else the URL's
    ``venturi_schema`` parameter, else ``venturi``) names the PostgreSQL
    schema holding venturi's tables. ``pool_size`` bounds the connections
    this object opens; ``reconnect_timeout`` bounds how long an operation
    keeps retrying while the server is unreachable.
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
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self.settings.conninfo_for("venturi-producer"),
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True},
            timeout=min(5.0, self._reconnect_s),
            open=False,
            name=f"venturi-{self.settings.schema}",
        )
        self._pool.open(wait=False)

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def _run(
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
        backoff = Backoff(self._reconnect_s, what)
        while True:
            body_done = False
            try:
                with self._pool.connection() as conn:
                    if not atomic:
                        return run_sync(conn, make())
                    with conn.transaction():
                        result = run_sync(conn, make())
                        body_done = True  # from here on a failure is the COMMIT's
                    return result
            except psycopg.Error as exc:
                if body_done or not is_retryable(exc):
                    clearer = translated(exc, self.settings.schema)
                    if clearer is exc:
                        raise
                    raise clearer from exc
                make = again or make
                time.sleep(backoff.after(exc))

    # -- schema ------------------------------------------------------------------

    def migrate(self) -> int:
        return self._run(lambda: _schema.migrate(self._queries, self.settings), what="migrate")

    def schema_version(self) -> int:
        return self._run(
            lambda: _schema.read_version(self._queries, self.settings),
            what="read the schema version",
            atomic=False,
        )

    # -- producer ------------------------------------------------------------------

    def enqueue(
        self, requests: Iterable[EnqueueRequest], *, conn: Any = None
    ) -> list[EnqueueResult]:
        if conn is not None:
            return enqueue_in(conn, self._queries, list(requests))
        plan = _producer.plan(requests)
        if plan is None:
            return []
        if (single := plan.alone) is not None:
            alone = self._run(
                lambda: _producer.insert_alone(self._queries, single),
                what="enqueue",
                atomic=False,
            )
            if alone is not None:
                return [alone]
            return self._run(
                lambda: _producer.enqueue(self._queries, plan.requests, merge_first=True),
                what="enqueue",
            )
        how = {"pipelined": plan.pipelined, "own_transaction": plan.own_transaction}
        return self._run(
            lambda: _producer.enqueue(self._queries, plan.requests, **how),
            what="enqueue",
            atomic=plan.atomic,
            again=lambda: _producer.enqueue(self._queries, plan.requests, again=True, **how),
        )

    # -- operator ------------------------------------------------------------------

    def get(self, job_id: str) -> StoredJob | None:
        return self._run(
            lambda: _operator.get(self._queries, job_id), what="read a job", atomic=False
        )

    def cancel(self, job_id: str, *, now: datetime) -> CancelOutcome:
        return self._run(
            lambda: _operator.cancel(self._queries, job_id, now, self._retention), what="cancel"
        )

    def retry(self, job_id: str, *, now: datetime) -> bool:
        return self._run(lambda: _operator.retry(self._queries, job_id, now), what="retry")

    def list_jobs(self, job_filter: JobFilter) -> list[StoredJob]:
        return self._run(
            lambda: _operator.list_jobs(self._queries, job_filter), what="list jobs", atomic=False
        )

    def stats(
        self, *, now: datetime, windows_minutes: Sequence[int] = (1, 5, 15)
    ) -> list[KindStats]:
        return self._run(
            lambda: _operator.stats(self._queries, now, windows_minutes), what="read statistics"
        )

    def prune(self, *, now: datetime, limit: int) -> int:
        return self._run(lambda: _operator.prune(self._queries, now, limit), what="prune")

    def pending_counts_by_kind(self) -> dict[str, int]:
        return self._run(
            lambda: _operator.pending_counts_by_kind(self._queries),
            what="count pending jobs",
            atomic=False,
        )

    def close(self) -> None:
        self._pool.close()


def enqueue_in(
    conn: Any, queries: dict[str, str], requests: Sequence[EnqueueRequest]
) -> list[EnqueueResult]:
    """Enqueue on the application's connection, inside its transaction, never committing it.

    A savepoint makes the batch all or nothing without ending the caller's
    transaction. A connection outside autocommit that has not started its
    transaction yet is made to start it first: otherwise the block would be
    an outer transaction and commit the jobs on its own.
    """
    if not isinstance(conn, psycopg.Connection):
        raise ConfigurationError(
            f"enqueue(conn=...) on a synchronous queue needs a psycopg.Connection, got "
            f"{type(conn).__qualname__} (use AsyncQueue for a psycopg.AsyncConnection)"
        )
    if not conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE:
        conn.execute("SELECT 1")  # psycopg opens the implicit transaction first
    with conn.transaction():
        return run_sync(
            conn, _producer.enqueue(queries, requests, pipelined=len(requests) > _producer.CHUNK)
        )
