"""The dashboard's views (``storage/_overview_types.py``) on SQLite.

Counted exactly, always: SQLite has no page sampling, and an embedded
database's tables stay small enough that a grouped scan is quick (the
dashboard keeps the overview a second or two, shared by every open page).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from venturi.storage import _overview
from venturi.storage._job_row import as_text
from venturi.storage._overview_types import (
    Basis,
    DeadGroups,
    JobLease,
    LeaseHolder,
    Overview,
)
from venturi.storage.sqlite._rows import epoch, from_epoch

_EXACT = Basis()


def _time(value: object) -> datetime | None:
    """An epoch column as a time; None for NULL or what is not a time."""
    if value is None:
        return None
    try:
        return from_epoch(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def overview(conn: sqlite3.Connection, queries: dict[str, str], now: datetime) -> Overview:
    pauses = {
        as_text(queue): (from_epoch(at), reason)
        for queue, at, reason in conn.execute(queries["queue_pauses"])
    }
    counts = [
        (as_text(queue), as_text(state), n, ready or 0, _time(oldest))
        for queue, state, n, ready, oldest in conn.execute(queries["overview_counts"], (epoch(now),))
    ]
    since = _overview.throughput_since(now)
    minutes = [
        (from_epoch(minute), completed or 0, dead or 0)
        for minute, completed, dead in conn.execute(queries["finished_per_minute"], (epoch(since),))
        if minute is not None
    ]
    table_rows = sum(n for _q, _s, n, _r, _o in counts)
    how = Basis(table_rows=table_rows)
    return Overview(_overview.queues(pauses, counts, how), _overview.throughput(now, minutes, how), how)


def dead_groups(conn: sqlite3.Connection, queries: dict[str, str], limit: int) -> DeadGroups:
    rows = [
        (None if code is None else as_text(code), n, _time(first), _time(last), as_text(sample))
        for code, n, first, last, sample in conn.execute(queries["dead_groups"], (limit,))
    ]
    ids = json.dumps([sample for *_rest, sample in rows])
    messages = {
        as_text(job_id): None if message is None else as_text(message)
        for job_id, message in conn.execute(queries["error_messages"], (ids,))
    }
    return DeadGroups(_overview.dead_groups(rows, messages, _EXACT), _EXACT)


def lease_holders(conn: sqlite3.Connection, queries: dict[str, str]) -> list[LeaseHolder]:
    holders: list[LeaseHolder] = []
    for worker, n, queues, first, last in conn.execute(queries["lease_holders"]):
        names = tuple(sorted(as_text(q) for q in json.loads(queues)))
        holders.append(LeaseHolder(as_text(worker or "(unknown)"), n, names, _time(first), _time(last)))
    return holders


def job_lease(conn: sqlite3.Connection, queries: dict[str, str], job_id: str) -> JobLease | None:
    row = conn.execute(queries["job_lease"], (job_id,)).fetchone()
    if row is None:
        return None
    worker, expires = row
    return JobLease(None if worker is None else as_text(worker), _time(expires))
