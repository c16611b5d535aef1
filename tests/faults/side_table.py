"""The side table: one row per execution of a fault-suite job, written by the handler.

Each worker process writes its own SQLite file (``executions-<pid>.sqlite3`` in
the run's directory), so that no fault done to one worker (a SIGKILL mid-write,
a SIGSTOP while holding a lock) can hold up another's record, and nothing here
touches the database under test. A row is committed when a run starts and
updated when its handler returns: a run that was killed or frozen has no end.
``synchronous=OFF`` loses nothing on a process crash (the operating system
keeps what was written); only a power cut could, and the suite does not cut power.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS executions (
    job_id  TEXT    NOT NULL,
    run     INTEGER NOT NULL,
    pid     INTEGER NOT NULL,
    started REAL    NOT NULL,
    ended   REAL
)
"""


class SideTable:
    """A ``RunRecorder`` (``tests/integration/_workers/pg_tasks.py``) into this process's file."""

    def __init__(self, directory: str | Path) -> None:
        path = Path(directory) / f"executions-{os.getpid()}.sqlite3"
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=OFF")
        self._conn.execute(SCHEMA)

    def write(self, event: str, job_id: str, run: int, lock: str) -> None:
        if event == "start":
            self._conn.execute(
                "INSERT INTO executions (job_id, run, pid, started) VALUES (?, ?, ?, ?)",
                (job_id, run, os.getpid(), time.time()),
            )
        else:
            self._conn.execute(
                "UPDATE executions SET ended = ? WHERE job_id = ? AND run = ? AND pid = ?",
                (time.time(), job_id, run, os.getpid()),
            )


@dataclass(frozen=True, slots=True)
class Execution:
    job_id: str
    run: int
    pid: int
    started: float
    ended: float | None


def read_executions(directory: str | Path) -> list[Execution]:
    """Every execution recorded by every worker process of the run, in start order."""
    found: list[Execution] = []
    for path in sorted(Path(directory).glob("executions-*.sqlite3")):
        conn = sqlite3.connect(path)
        conn.row_factory = sqlite3.Row
        try:
            rows = conn.execute("SELECT job_id, run, pid, started, ended FROM executions")
            found += [
                Execution(r["job_id"], r["run"], r["pid"], r["started"], r["ended"]) for r in rows
            ]
        finally:
            conn.close()
    return sorted(found, key=lambda e: e.started)
