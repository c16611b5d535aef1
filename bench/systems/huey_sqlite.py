"""huey 3.5's SqliteHuey, in the benchmark's peers environment.

At synchronous=FULL (``fsync=True``), like venturi's SQLite default. Each job is a
``noop(n)`` task that appends one line (its end time) to a marks file opened with
O_APPEND: huey keeps no record of a task that returned None, so the marks are what
completion is counted by, with the task table counted down to empty. Processing is huey's
own ``Consumer`` with one worker thread in this process, polling with huey's shortest
delays (the settings of the research probe: 1 ms initial, 10 ms at most).

    python -m bench.systems.huey_sqlite ROLE --url FILE --marks FILE [--jobs N]
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from huey import SqliteHuey

from bench import _driver

ROLES = ("setup", "reset", "fill", "verify", "enqueue-single", "worker")
NAME = "bench"


def _huey(path: str, *, durable: bool, marks: str = "") -> tuple[SqliteHuey, Any]:
    huey = SqliteHuey(NAME, filename=path, fsync=durable)
    fd = os.open(marks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if marks else -1

    @huey.task(name="noop")
    def noop(n: int) -> None:
        os.write(fd, b"%.6f\n" % time.time())

    return huey, noop


def _count(path: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM task").fetchone()[0])
    finally:
        conn.close()


def _marks(path: str) -> tuple[int, float | None]:
    if not os.path.exists(path):
        return 0, None
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    return len(lines), max((float(x) for x in lines), default=None)


def _remove(*paths: str) -> None:
    for path in paths:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


def main() -> None:
    args = _driver.arguments(ROLES)
    path = args.url
    if args.role in ("setup", "reset"):
        _remove(path, args.marks)
        huey, _ = _huey(path, durable=True)
        huey.storage.close()
        _driver.answer()
    elif args.role == "fill":
        # Untimed, so without durability: the jobs are in the file all the same.
        huey, noop = _huey(path, durable=False)
        for n in range(args.jobs):
            noop(n)
        huey.storage.close()
        _driver.answer()
    elif args.role == "verify":
        done, last = _marks(args.marks)
        _driver.answer(
            done=done, done_once=done, journaled=done, pending=_count(path), last_done_at=last
        )
    elif args.role == "enqueue-single":
        huey, noop = _huey(path, durable=True)
        noop(-1)  # the connection, open and warm
        huey.flush()
        _driver.ready()
        watch = _driver.Stopwatch()
        for n in range(args.jobs):
            noop(n)
        _driver.report(**watch.fields())
    else:
        huey, _ = _huey(path, durable=True, marks=args.marks)
        consumer = huey.create_consumer(
            workers=1, worker_type="thread", periodic=False, initial_delay=0.001, max_delay=0.01,
            check_worker_health=False,
        )  # fmt: skip
        _driver.ready()
        watch = _driver.Stopwatch()
        consumer.start()
        # One stat() per 5 ms: lines are of fixed width ("%.6f\n" of an epoch time).
        width = len(b"%.6f\n" % time.time())
        while os.stat(args.marks).st_size < args.jobs * width:  # created by _huey
            time.sleep(0.005)
        fields = watch.fields()
        consumer.stop(graceful=True)
        _driver.report(**fields)


if __name__ == "__main__":
    main()
