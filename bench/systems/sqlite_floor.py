"""The bare SQLite floors: Python's sqlite3 at synchronous=FULL, no venturi code on the clock.

- ``worker``: the same claim-1,000 / complete-1,000 loop as a worker's, bare. One
  transaction claims 1,000 ready rows and marks them running (``UPDATE ... RETURNING``),
  a second marks them done; two commits per 1,000 jobs, on a minimal table (an integer
  key, a state, the payload, one partial index of the ready rows), in WAL mode as
  venturi's file is.
- ``enqueue-batch``: a bare ``executemany`` of the very rows venturi's batch enqueue
  stores, in transactions of 1,000, into a new file with venturi's schema. The rows are
  made by venturi before GO (untimed) and read back; the columns inserted are those it
  wrote (a column left at its default is left to it here too). What venturi adds on top
  (building the tasks, encoding, ids) is what the ratio shows.

    python -m bench.systems.sqlite_floor ROLE --url FILE [--jobs N]
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from bench import _driver

ROLES = ("setup", "reset", "fill", "verify", "enqueue-batch", "worker")
BATCH = 1000


def _connect(path: str, synchronous: str = "FULL") -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


def _remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def _create(path: str) -> None:
    _remove(path)
    conn = _connect(path)
    conn.execute("CREATE TABLE floor_jobs (id INTEGER PRIMARY KEY, state INTEGER NOT NULL "
                 "DEFAULT 0, payload TEXT NOT NULL)")  # fmt: skip
    conn.execute("CREATE INDEX floor_ready ON floor_jobs (id) WHERE state = 0")
    conn.close()


def _fill(path: str, jobs: int) -> None:
    conn = _connect(path, "NORMAL")  # untimed
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO floor_jobs (id, payload) VALUES (?, ?)",
                     ((n + 1, json.dumps({"n": n})) for n in range(jobs)))  # fmt: skip
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _work(path: str) -> None:
    conn = _connect(path)
    claim = ("UPDATE floor_jobs SET state = 1 WHERE id IN (SELECT id FROM floor_jobs "
             f"WHERE state = 0 ORDER BY id LIMIT {BATCH}) RETURNING id, payload")  # fmt: skip
    done = "UPDATE floor_jobs SET state = 2 WHERE id = ?"
    _driver.ready()
    watch = _driver.Stopwatch()
    while True:
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute(claim).fetchall()
        conn.execute("COMMIT")
        if not rows:
            break
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(done, ((row[0],) for row in rows))
        conn.execute("COMMIT")
    fields = watch.fields()
    conn.close()
    _driver.report(**fields)


def _venturi_rows(path: str, jobs: int) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The rows venturi's batch enqueue stores for ``jobs`` jobs (made in a scratch file),
    and the columns it wrote."""
    from venturi import Queue
    from venturi.storage.sqlite import SqliteStorage

    from bench.generated.tasks import Noop

    scratch = path + ".rows"
    _remove(scratch)
    with Queue(SqliteStorage(scratch, synchronous="NORMAL")) as queue:
        for start in range(0, jobs, BATCH):
            queue.enqueue_many(Noop(n=n) for n in range(start, min(start + BATCH, jobs)))
    conn = sqlite3.connect(scratch)
    try:
        info = conn.execute("PRAGMA table_info(jobs)").fetchall()  # cid, name, type, notnull, default, pk
        rows = conn.execute("SELECT * FROM jobs ORDER BY rowid").fetchall()
        keep = []
        for i, (_, name, _, _, default_sql, _) in enumerate(info):
            default = conn.execute(f"SELECT {default_sql}").fetchone()[0] if default_sql else None
            if {row[i] for row in rows} != {default}:
                keep.append((i, name))
    finally:
        conn.close()
        _remove(scratch)
    return [name for _, name in keep], [tuple(row[i] for i, _ in keep) for row in rows]


def _enqueue(path: str, jobs: int) -> None:
    from venturi import Queue
    from venturi.storage.sqlite import SqliteStorage

    columns, rows = _venturi_rows(path, jobs)
    _remove(path)
    with Queue(SqliteStorage(path)):
        pass  # venturi's schema, empty
    conn = _connect(path)
    insert = f"INSERT INTO jobs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    _driver.ready()
    watch = _driver.Stopwatch()
    for start in range(0, len(rows), BATCH):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(insert, rows[start : start + BATCH])
        conn.execute("COMMIT")
    fields = watch.fields()
    conn.close()
    _driver.report(**fields)


def main() -> None:
    args = _driver.arguments(ROLES)
    path = args.url
    if args.role in ("setup", "reset"):
        _create(path)
        _driver.answer()
    elif args.role == "fill":
        _fill(path, args.jobs)
        _driver.answer()
    elif args.role == "verify":
        conn = sqlite3.connect(path)
        try:
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "floor_jobs" in tables:
                done, pending = conn.execute(
                    "SELECT count(*) FILTER (WHERE state = 2), count(*) FILTER (WHERE state = 0) "
                    "FROM floor_jobs"
                ).fetchone()
            else:  # the batch enqueue's file: venturi's table
                done, (pending,) = 0, conn.execute("SELECT count(*) FROM jobs WHERE state = 'pending'").fetchone()
        finally:
            conn.close()
        # No completion time is stored: the harness takes the end of the loop instead.
        _driver.answer(done=done, done_once=done, journaled=done, pending=pending, last_done_at=None)
    elif args.role == "enqueue-batch":
        _enqueue(path, args.jobs)
    else:
        _work(path)


if __name__ == "__main__":
    main()
