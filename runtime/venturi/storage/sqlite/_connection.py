"""Opening a SQLite connection, and meeting other processes' locks without wasting time.

Several worker processes on one host share one database file. Every write
runs inside ``BEGIN IMMEDIATE`` so that the write lock is taken up front and
a transaction never fails half-way on a lock upgrade. When another process
holds the lock, SQLite's own busy handler sleeps 1, 2, 5, 10 ... ms between
attempts; measured on this project's reference machine (a prototype of
this storage, before it was written) that leaves a second worker process idle most
of the time. So ``BEGIN IMMEDIATE`` is retried here, in Python, with sleeps
of at most 300 µs, up to a bounded total wait.

``busy_timeout`` is set while the connection is opened (its pragmas can meet
another process converting the file to WAL) and then set to 0 for good:
toggling it around every ``BEGIN IMMEDIATE`` costs two statements, about
8 µs per transaction on the reference machine. Its safety net is kept by
running reads outside a transaction through the same retry loop
(``retry_busy``). Inside a ``BEGIN IMMEDIATE`` transaction in WAL mode no
statement waits for a lock: the write lock and the read snapshot are held.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Literal, TypeVar

from venturi.errors import BackendUnavailable, ConfigurationError

Synchronous = Literal["FULL", "NORMAL"]
T = TypeVar("T")

#: The busy timeout while opening the connection only (see the module docstring).
OPEN_BUSY_TIMEOUT_S = 5.0
#: The WAL file is truncated to this size after checkpoints.
WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024
#: Short sleeps while the lock is contended: waking fast is what keeps two processes busy.
SHORT_SLEEP_S = 300e-6
#: After this long, back off a little more so that a long writer is not hammered.
PATIENT_AFTER_S = 0.05
LONG_SLEEP_S = 2e-3


def connect(path: str, *, synchronous: Synchronous) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, the given durability.

    ``check_same_thread`` is off because the storage serialises its own use of
    the connection with a lock, and a ``Queue`` may be shared by web threads.
    """
    if synchronous not in ("FULL", "NORMAL"):
        raise ConfigurationError(f"synchronous must be 'FULL' or 'NORMAL', not {synchronous!r}")
    try:
        conn = sqlite3.connect(
            path,
            isolation_level=None,
            check_same_thread=False,
            timeout=OPEN_BUSY_TIMEOUT_S,
            cached_statements=256,
        )
    except sqlite3.Error as exc:
        raise BackendUnavailable(f"cannot open SQLite database {path!r}: {exc}") from exc
    try:
        # journal_mode=WAL is persistent in the file; asking again is cheap and
        # converts a database created by someone else.
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if path != ":memory:" and str(mode).lower() != "wal":
            raise BackendUnavailable(f"SQLite database {path!r} refused WAL mode (got {mode!r})")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        # After a checkpoint, cut the WAL file back instead of keeping its peak size.
        conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT_BYTES}")
        conn.execute("PRAGMA busy_timeout=0")
    except BaseException:
        conn.close()
        raise
    return conn


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    # Errors the sqlite3 module raises itself (a column that is not valid UTF-8, say)
    # carry no SQLite error code.
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _backoff(started: float, max_wait_s: float) -> None:
    """Sleep briefly before the next attempt, or give up once ``max_wait_s`` has passed."""
    waited = time.monotonic() - started
    if waited > max_wait_s:
        raise BackendUnavailable(
            f"the SQLite database stayed locked by another connection for {waited:.1f} s"
        )
    # Random sleeps de-synchronise competing processes; after a while, back
    # off a little more so that one long writer is not hammered.
    ceiling = SHORT_SLEEP_S if waited < PATIENT_AFTER_S else LONG_SLEEP_S
    time.sleep(random.random() * ceiling)


def begin_immediate(conn: sqlite3.Connection, *, max_wait_s: float) -> None:
    """``BEGIN IMMEDIATE``, retried on ``SQLITE_BUSY`` with sub-millisecond sleeps.

    Raises ``BackendUnavailable`` when the lock stays held for ``max_wait_s``.
    """
    started: float | None = None
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
        if started is None:
            started = time.monotonic()
        _backoff(started, max_wait_s)


def try_begin_immediate(conn: sqlite3.Connection) -> bool:
    """``BEGIN IMMEDIATE`` once, without waiting: False when another connection holds the lock."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            return False
        raise
    return True


def retry_busy(read: Callable[[], T], *, max_wait_s: float) -> T:
    """Run an idempotent read, again if it meets ``SQLITE_BUSY`` (rare in WAL mode)."""
    started: float | None = None
    while True:
        try:
            return read()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
        if started is None:
            started = time.monotonic()
        _backoff(started, max_wait_s)


def in_write_transaction(conn: sqlite3.Connection, work: Callable[[], T], *, max_wait_s: float) -> T:
    """Run ``work`` between ``BEGIN IMMEDIATE`` and ``COMMIT``; any exception rolls it all back.

    A plain function rather than a context manager: this wraps every write,
    and a generator-based context manager costs about 2 µs more per call.
    """
    begin_immediate(conn, max_wait_s=max_wait_s)
    try:
        result = work()
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


def split_statements(script: str) -> Iterator[str]:
    """The statements of a SQL script, one by one.

    ``executescript`` would commit any open transaction first, so migrations
    run statement by statement inside their own transaction instead.
    ``sqlite3.complete_statement`` knows about triggers and quoted semicolons.
    """
    buffer: list[str] = []
    for line in script.splitlines(keepends=True):
        buffer.append(line)
        text = "".join(buffer)
        if sqlite3.complete_statement(text):
            statement = text.strip()
            buffer.clear()
            if _has_code(statement):
                yield statement
    rest = "".join(buffer).strip()
    if _has_code(rest):
        raise ValueError(f"incomplete SQL statement at the end of a script: {rest[:80]!r}")


def _has_code(text: str) -> bool:
    return any(
        line.strip() and not line.strip().startswith("--") for line in text.splitlines()
    )
