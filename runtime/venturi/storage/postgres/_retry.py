"""Which database errors are worth another attempt, and how long to wait between attempts.

Shared by the sync and async storages. A retry is only ever made where it
cannot apply work twice: a transaction whose body failed (the server rolled
it back), or a single statement that is idempotent or fenced. A failure
while committing is ambiguous and is never retried here.
"""

from __future__ import annotations

import random
import time

import psycopg
from psycopg import errors
from psycopg_pool import PoolClosed

from venturi.errors import BackendUnavailable, SchemaOutOfDate, StorageClosed

#: SQLSTATEs of a transaction the server rolled back that will likely pass
#: when run again: serialization failure, deadlock.
_RETRY_TRANSACTION = frozenset({"40001", "40P01"})
#: The server going away: admin shutdown, crash shutdown, cannot connect now.
_SERVER_GONE = frozenset({"57P01", "57P02", "57P03"})

INITIAL_DELAY_S = 0.05
MAX_DELAY_S = 2.0


def is_connection_error(exc: BaseException) -> bool:
    """The connection is lost or cannot be made (the client's own errors carry no SQLSTATE)."""
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, PoolClosed):
        return False  # a pool closed by its owner does not come back
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in _SERVER_GONE


def is_retryable(exc: BaseException) -> bool:
    """Worth running again: a lost connection, or a transaction the server aborted for
    a transient reason."""
    if is_connection_error(exc):
        return True
    if not isinstance(exc, errors.Error):
        return False
    return exc.sqlstate in _RETRY_TRANSACTION


class Backoff:
    """Sleeps between attempts: exponential with jitter, capped at ``MAX_DELAY_S``.

    ``after(exc)`` gives the next sleep, or raises ``BackendUnavailable`` (from
    ``exc``) once ``timeout_s`` has passed since the first failure.
    """

    __slots__ = ("_deadline", "_delay", "_timeout_s", "_what")

    def __init__(self, timeout_s: float, what: str) -> None:
        self._timeout_s = timeout_s
        self._what = what
        self._deadline: float | None = None
        self._delay = INITIAL_DELAY_S

    def after(self, exc: BaseException) -> float:
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + self._timeout_s
        remaining = self._deadline - now
        if remaining <= 0:
            raise BackendUnavailable(
                f"PostgreSQL stayed unavailable for {self._timeout_s:.0f} s while trying to "
                f"{self._what}: {exc}"
            ) from exc
        delay = min(remaining, self._delay * (0.5 + random.random() / 2))
        self._delay = min(self._delay * 2, MAX_DELAY_S)
        return delay


def translated(exc: psycopg.Error, schema: str) -> Exception:
    """A missing venturi table means the schema was never migrated: say what to do.
    A closed pool means the storage was closed."""
    if isinstance(exc, PoolClosed):
        return closed_error()
    if isinstance(exc, errors.UndefinedTable):
        return SchemaOutOfDate(
            f"the venturi tables are missing in schema {schema!r} ({str(exc).splitlines()[0]}); "
            "run `venturi migrate`, or open the queue with migrate=True (an AsyncQueue "
            "migrates in `await queue.open()` or `async with`)"
        )
    return exc


def closed_error() -> StorageClosed:
    return StorageClosed(
        "this PostgreSQL storage is closed (close() or the end of its with block); "
        "open a new Queue or storage"
    )
