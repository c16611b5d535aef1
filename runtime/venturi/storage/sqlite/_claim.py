"""Claim: lease a batch of ready jobs to a worker; heartbeat: keep those leases.

The claim reads candidates with one range scan of the ready index per queue
(an index led by the queue serves one queue in claim order; serving several
queues with one ``IN`` would sort every ready row of them instead), merges
the queues in Python, keeps the first job per concurrency key, and leases
the chosen rows with one ``UPDATE``, then reads them back in claim order (one
``SELECT``: cheaper than SQLite's ``RETURNING``). The journal of the jobs that
have one is read with a single extra query for the whole batch.
A paused queue (``queue_pauses``) gives no candidates: ``claim_candidates``
looks it up before it scans anything.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from operator import attrgetter, itemgetter
from typing import Any

from venturi._journal import HISTORY_WINDOW, JournalEntry
from venturi.storage._layouts import ClaimRow, claim_row, claimed_jobs
from venturi.storage._run_types import ClaimedJob, ClaimRequest
from venturi.storage.sqlite._rows import CandidateRow, epoch, journals_by_job


def claim(
    conn: sqlite3.Connection, queries: dict[str, str], request: ClaimRequest, now: datetime
) -> list[ClaimedJob]:
    if request.limit <= 0 or not request.queues or not request.kinds:
        return []
    now_s = epoch(now)
    kinds = json.dumps(request.kinds)
    select = queries["claim_candidates"]
    per_queue = [
        conn.execute(select, (queue, now_s, kinds, request.limit)).fetchall()
        for queue in dict.fromkeys(request.queues)  # each once; a paused one gives no rows
    ]
    rowids = chosen_rowids(per_queue, request.limit)
    if not rowids:
        return []
    return lease(conn, queries, request, now, rowids)


def lease(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    request: ClaimRequest,
    now: datetime,
    rowids: list[int],
) -> list[ClaimedJob]:
    """Lease the chosen rows and read what the worker needs of them, in the order of
    ``rowids`` (claim order, as the callers choose them)."""
    expires = now + request.lease_duration
    chosen = json.dumps(rowids)
    params = (
        chosen, request.lease_token, epoch(expires), request.worker_id,
        json.dumps(rowids[: request.start]),
    )  # fmt: skip
    conn.execute(queries["lease_rows"], params)
    leased = conn.execute(queries["leased_rows"], (chosen,))
    rows: list[ClaimRow[Any]] = list(map(claim_row, leased))
    _check_types(rows)
    with_journal = [r.id for r in rows if r.journal_count]
    journals: dict[str, list[JournalEntry]] = {}
    if with_journal:
        journals = journals_by_job(
            conn.execute(queries["journal_of_jobs"], (json.dumps(with_journal), HISTORY_WINDOW))
        )
    return claimed_jobs(rows, journals, request.lease_token, expires)


_PRIORITY = attrgetter("priority")
_RUN_AT = attrgetter("run_at")
_ID = attrgetter("id")


def _check_types(rows: Sequence[ClaimRow[Any]]) -> None:
    """Raise if a leased row's priority, run time or id has another type than its
    column's (another program wrote it): the claim is then rolled back and made again
    carefully (``_careful``), which ends that row as dead and leases the rest. One set
    of types per column, built in C: about 0.1 µs per job."""
    if (
        not set(map(type, map(_PRIORITY, rows))) <= {int}
        or not set(map(type, map(_RUN_AT, rows))) <= {float, int}
        or not set(map(type, map(_ID, rows))) <= {str}
    ):
        raise TypeError("a claimed row holds a value of another type than its column's")


def any_ready(
    conn: sqlite3.Connection, queries: dict[str, str], request: ClaimRequest, now: datetime
) -> bool:
    """Whether a claim could lease anything now (a read: no lock taken)."""
    if request.limit <= 0 or not request.queues or not request.kinds:
        return False
    now_s = epoch(now)
    kinds = json.dumps(request.kinds)
    select = queries["claim_candidates"]
    return any(
        conn.execute(select, (queue, now_s, kinds, 1)).fetchone() is not None
        for queue in dict.fromkeys(request.queues)  # a paused queue gives no rows
    )


def unpaused(
    conn: sqlite3.Connection, queries: dict[str, str], queues: Sequence[str]
) -> list[str]:
    """The requested queues, once each, less those paused (one read of a tiny table)."""
    paused = {queue for (queue,) in conn.execute(queries["paused_queues"])}
    return [queue for queue in dict.fromkeys(queues) if queue not in paused]


_ROWID = itemgetter(CandidateRow._fields.index("rowid"))
_KEY = itemgetter(CandidateRow._fields.index("concurrency_key"))


def chosen_rowids(per_queue: Sequence[list[Any]], limit: int) -> list[int]:
    """``choose`` over the raw rows of ``claim_candidates``, one list per queue.

    The common claim, one queue and no concurrency key among its candidates, takes
    the rows as they come (already in claim order, at most ``limit``): no row is
    made a ``CandidateRow``, which saves half a microsecond or more per job claimed.
    """
    if len(per_queue) == 1:
        rows = per_queue[0][:limit]
        if set(map(_KEY, rows)) <= {None}:
            return list(map(_ROWID, rows))
    return choose([candidates(rows) for rows in per_queue], limit)


def candidates(rows: Sequence[Sequence[Any]]) -> list[CandidateRow]:
    """The rows of ``claim_candidates``, by name."""
    return list(map(CandidateRow._make, rows))


def choose(per_queue: Sequence[list[CandidateRow]], limit: int) -> list[int]:
    """Rowids in claim order across queues, at most one per concurrency key.

    Each queue's candidates are already in claim order. A skipped duplicate
    key may leave the batch short; the next claim finds that key held and
    scans past it.
    """
    ordered: Iterable[CandidateRow]
    if len(per_queue) == 1:
        ordered = per_queue[0]
    else:
        ordered = heapq.merge(*per_queue, key=lambda r: (-r.priority, r.run_at, r.id))
    chosen: list[int] = []
    keys: set[str] = set()
    for candidate in ordered:
        key = candidate.concurrency_key
        if key is not None:
            if key in keys:
                continue
            keys.add(key)
        chosen.append(candidate.rowid)
        if len(chosen) == limit:
            break
    return chosen


def heartbeat(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    leases: Sequence[tuple[str, str]],
    lease_duration: timedelta,
    now: datetime,
) -> set[str]:
    if not leases:
        return set()
    current = running_tokens(conn, queries, [job_id for job_id, _ in leases])
    held = [(job_id, token) for job_id, token in leases if current.get(job_id) == token]
    expires = epoch(now + lease_duration)
    conn.executemany(queries["extend_lease"], [(job_id, token, expires) for job_id, token in held])
    return {job_id for job_id, _ in held}


def running_tokens(
    conn: sqlite3.Connection, queries: dict[str, str], job_ids: Sequence[str]
) -> dict[str, str]:
    """For the given jobs still running: job_id -> lease_token."""
    rows = conn.execute(queries["running_tokens"], (json.dumps(list(job_ids)),))
    return dict(rows.fetchall())
