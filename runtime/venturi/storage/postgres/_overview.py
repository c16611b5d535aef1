"""The dashboard's views (``storage/_overview_types.py``) on PostgreSQL, as ``Steps``.

The number of jobs comes from the catalog (the planner's rows per page of
``job_states`` times the pages it has now), never from counting them. Up to
``exact_up_to`` rows the views count every row; above, they read a fixed sample of
the table's pages (``TABLESAMPLE SYSTEM ... REPEATABLE``) and scale the counts up,
so that their cost stays that of a few thousand pages however large the table
grows.
"""

from __future__ import annotations

from datetime import datetime

from venturi.storage import _overview
from venturi.storage._overview_types import Basis, DeadGroups, JobLease, LeaseHolder, Overview
from venturi.storage.postgres._rows import aware, utc
from venturi.storage.postgres._steps import Steps, Stmt


def _basis(queries: dict[str, str], exact_up_to: int) -> Steps[Basis]:
    rows = yield Stmt(queries["table_size"])
    table_rows, pages = rows[0]
    return _overview.basis(int(table_rows), int(pages), exact_up_to)


def _maybe_utc(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def overview(queries: dict[str, str], now: datetime, exact_up_to: int) -> Steps[Overview]:
    how = yield from _basis(queries, exact_up_to)
    pauses = {queue: (utc(at), reason) for queue, at, reason in (yield Stmt(queries["queue_pauses"]))}
    since = _overview.throughput_since(now)
    params = {"now": aware(now), "since": aware(since), "percent": how.sample_percent}
    counts: list[tuple[str, str, int, int, datetime | None]] = []
    minutes: list[tuple[datetime, int, int]] = []
    for queue, state, minute, n, ready, oldest, completed, dead in (
        yield Stmt(queries["overview_counts"], params)
    ):
        if queue is not None:
            counts.append((queue, state, n, ready, _maybe_utc(oldest)))
        elif minute is not None and utc(minute) >= since:  # not pending, nor dead long ago
            minutes.append((utc(minute), completed, dead))
    return Overview(_overview.queues(pauses, counts, how), _overview.throughput(now, minutes, how), how)


def dead_groups(queries: dict[str, str], exact_up_to: int, limit: int) -> Steps[DeadGroups]:
    how = yield from _basis(queries, exact_up_to)
    params = {"percent": how.sample_percent, "limit": limit}
    groups = yield Stmt(queries["dead_groups"], params)
    # Each group's newest job by seq, named by its id, with its message.
    newest = yield Stmt(queries["error_messages"], {"seqs": [seq for *_rest, seq in groups]})
    ids = {seq: job_id for seq, job_id, _message in newest}
    messages = {job_id: message for _seq, job_id, message in newest}
    rows = [
        (code, n, _maybe_utc(first), _maybe_utc(last), ids.get(seq, ""))
        for code, n, first, last, seq in groups
    ]
    return DeadGroups(_overview.dead_groups(rows, messages, how), how)


def lease_holders(queries: dict[str, str]) -> Steps[list[LeaseHolder]]:
    return [
        LeaseHolder(worker or "(unknown)", n, tuple(queues), _maybe_utc(first), _maybe_utc(last))
        for worker, n, queues, first, last in (yield Stmt(queries["lease_holders"]))
    ]


def job_lease(queries: dict[str, str], job_id: str) -> Steps[JobLease | None]:
    rows = yield Stmt(queries["job_lease"], {"id": job_id})
    if not rows:
        return None
    worker, expires = rows[0]
    return JobLease(worker, _maybe_utc(expires))
