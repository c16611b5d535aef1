"""The database under test, as the fault suite reads it: the same questions of both backends.

The suite reads the queue's tables directly (not through venturi) so that what it
checks is what is stored, whatever the runtime believes: job states and run
counts, the completions and lost runs in the journal, leftover concurrency locks.
Reads never take a write lock: on SQLite they are autocommit reads of a WAL
database (they go on while a frozen worker holds the write lock), on PostgreSQL
one connection of the test's own, made again when a fault drops it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

TERMINAL = ("completed", "dead", "cancelled")
#: Journal events that end a run without its result: its work, if finished, was lost.
LOST_RUN_EVENTS = ("lease_expired", "released")


@dataclass
class Stored:
    """What the database holds at the end of a run."""

    jobs: dict[str, tuple[str, int]] = field(default_factory=dict)  # id -> (state, run_count)
    completions: list[tuple[str, int]] = field(default_factory=list)  # (job id, run)
    finished_at: list[float] = field(default_factory=list)  # epoch seconds of completions
    lost_runs: set[tuple[str, int]] = field(default_factory=set)  # (job id, run)
    locks: int = 0  # concurrency-key lock rows left behind (PostgreSQL)


class Target(Protocol):
    backend: str
    url: str

    def counts(self) -> dict[str, int]: ...

    def running(self, pid: int | None = None) -> set[str]: ...

    def unfinished(self, ids: Collection[str]) -> int: ...

    def stored(self) -> Stored: ...

    def close(self) -> None: ...


def _worker_pattern(pid: int | None) -> str:
    """``WorkerConfig``'s default worker id is ``host:pid:random``."""
    return "%" if pid is None else f"%:{pid}:%"


class SqliteTarget:
    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        return self._conn

    def counts(self) -> dict[str, int]:
        rows = self._db().execute("SELECT state, count(*) FROM jobs GROUP BY state")
        return {state: n for state, n in rows}

    def running(self, pid: int | None = None) -> set[str]:
        rows = self._db().execute(
            "SELECT id FROM jobs WHERE state = 'running' AND worker_id LIKE ?",
            (_worker_pattern(pid),),
        )
        return {job_id for (job_id,) in rows}

    def unfinished(self, ids: Collection[str]) -> int:
        row = (
            self._db()
            .execute(
                "SELECT count(*) FROM jobs WHERE id IN (SELECT value FROM json_each(?)) "
                "AND state NOT IN ('completed', 'dead', 'cancelled')",
                (json.dumps(list(ids)),),
            )
            .fetchone()
        )
        return int(row[0])

    def stored(self) -> Stored:
        db = self._db()
        out = Stored()
        out.jobs = {i: (s, r) for i, s, r in db.execute("SELECT id, state, run_count FROM jobs")}
        out.completions = list(
            db.execute("SELECT job_id, run FROM journal WHERE event = 'completed'")
        )
        out.finished_at = sorted(
            at for (at,) in db.execute(
                "SELECT finished_at FROM jobs WHERE state = 'completed'"
            )
        )  # fmt: skip
        out.lost_runs = set(
            db.execute("SELECT job_id, run FROM journal WHERE event IN (?, ?)", LOST_RUN_EVENTS)
        )
        return out  # no lock rows to count: on SQLite a running job is its own lock

    def write_lock_holder(self) -> int | None:
        """The pid of the process holding the database's write lock, or None.

        In WAL mode the write lock is a POSIX lock on byte 120 of the ``-shm``
        file (SQLite's ``WAL_WRITE_LOCK``); ``/proc/locks`` names its owner. Read
        without touching the database, so the probe never takes the lock itself.
        """
        try:
            inode = (self.path.parent / (self.path.name + "-shm")).stat().st_ino
        except FileNotFoundError:
            return None
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields:  # a process waiting for the lock, not holding it
                continue
            if fields[1:4] == ["POSIX", "ADVISORY", "WRITE"] and fields[6:8] == ["120", "120"]:
                if int(fields[5].rsplit(":", 1)[1]) == inode:
                    return int(fields[4])
        return None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class PostgresTarget:
    """A schema on the suite's own server (``tests/pg_server.py``)."""

    backend = "postgres"
    #: Not ``venturi-*``: terminating the workers' backends must spare the monitor.
    APPLICATION = "faults-monitor"

    def __init__(self, admin_url: str, schema: str, url: str) -> None:
        self.admin_url = admin_url
        self.schema = schema
        self.url = url
        self._conn: Any = None

    def _query(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Run a read, connecting again (for up to a minute) when a fault dropped the link."""
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(
                        self.admin_url, autocommit=True, connect_timeout=5,
                        application_name=self.APPLICATION,
                    )  # fmt: skip
                # A job is two rows (job_states, job_bodies) with one seq; joined USING it,
                # their columns read unqualified, as one table's would.
                text = sql.replace("{jobs}", "({s}.job_states JOIN {s}.job_bodies USING (seq))")
                text = text.replace("{journal}", "({s}.journal_entries JOIN {s}.job_bodies USING (seq))")
                rows: list[tuple[Any, ...]] = self._conn.execute(
                    text.replace("{s}", f'"{self.schema}"'), params
                ).fetchall()
                return rows
            except psycopg.OperationalError:
                self.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def connection(self) -> Any:
        """The monitor's open connection (for admin statements while slots are exhausted)."""
        self._query("SELECT 1")
        return self._conn

    def counts(self) -> dict[str, int]:
        return {s: n for s, n in self._query("SELECT state, count(*) FROM {jobs} GROUP BY state")}

    def running(self, pid: int | None = None) -> set[str]:
        rows = self._query(
            "SELECT id FROM {jobs} WHERE state = 'running' AND worker_id LIKE %s",
            (_worker_pattern(pid),),
        )
        return {job_id for (job_id,) in rows}

    def unfinished(self, ids: Collection[str]) -> int:
        [(n,)] = self._query(
            "SELECT count(*) FROM {jobs} WHERE id = ANY(%s) "
            "AND state NOT IN ('completed', 'dead', 'cancelled')",
            (list(ids),),
        )
        return int(n)

    def stored(self) -> Stored:
        out = Stored()
        out.jobs = {
            i: (s, r) for i, s, r in self._query("SELECT id, state, run_count FROM {jobs}")
        }
        out.completions = [
            (i, r)
            for i, r in self._query("SELECT id, run FROM {journal} WHERE event = 'completed'")
        ]
        at: list[datetime] = [
            a for (a,) in self._query("SELECT finished_at FROM {jobs} WHERE state = 'completed'")
        ]
        out.finished_at = sorted(a.timestamp() for a in at)
        out.lost_runs = {
            (i, r)
            for i, r in self._query(
                "SELECT id, run FROM {journal} WHERE event = ANY(%s)",
                (list(LOST_RUN_EVENTS),),
            )
        }
        [(locks,)] = self._query("SELECT count(*) FROM {s}.concurrency_holds")
        out.locks = int(locks)
        return out

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
