"""Ending runs: the worker's fenced results, and leases that simply ran out.

A batch of results costs three statements whatever its size: one read of the
current lease tokens, then one ``executemany`` of ``end_run`` and one of
``insert_journal`` for the results whose fence held (``executemany`` beat
JSON-array statements in every pairing the probe measured on SQLite).
``end_run`` repeats the fence in its ``WHERE`` so that it is safe on its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi._journal import JournalEntry, JournalEvent
from venturi.storage._types import Resolution, RunResult
from venturi.storage.sqlite._claim import running_tokens
from venturi.storage.sqlite._rows import epoch, journal_params, optional_epoch

LEASE_EXPIRED = "lease_expired"
BACKSTOP_REACHED = "backstop_reached"

_STATE = {
    Resolution.COMPLETED: "completed",
    Resolution.PAUSED: "pending",
    Resolution.RETRY: "pending",
    Resolution.RELEASED: "pending",
    Resolution.DEAD: "dead",
    Resolution.CANCELLED: "cancelled",
}
_FAILURES = {Resolution.RETRY: 1, Resolution.DEAD: 1}


def finish(
    conn: sqlite3.Connection, queries: dict[str, str], results: Sequence[RunResult], now: datetime
) -> list[bool]:
    if not results:
        return []
    current = running_tokens(conn, queries, [r.job_id for r in results])
    now_s = epoch(now)
    updates: list[tuple[Any, ...]] = []
    entries: list[tuple[Any, ...]] = []
    held: list[bool] = []
    for result in results:
        token = current.get(result.job_id)
        if token is None or token[0] != result.lease_token:
            held.append(False)
            continue
        # A second result for the same job in one batch meets a spent lease.
        del current[result.job_id]
        held.append(True)
        updates.append(_end_run_params(result, now_s))
        entries.append(journal_params(result.job_id, result.journal_entry))
    if updates:
        conn.executemany(queries["end_run"], updates)
        conn.executemany(queries["insert_journal"], entries)
    return held


def _end_run_params(result: RunResult, now_s: float) -> tuple[Any, ...]:
    state = _STATE[result.resolution]
    terminal = state != "pending"
    run_at = None
    if not terminal:
        run_at = now_s if result.run_at is None else epoch(result.run_at)
    return (
        result.job_id,
        result.lease_token,
        state,
        run_at,
        None if terminal else result.carry,
        _FAILURES.get(result.resolution, 0),
        result.output if result.resolution is Resolution.COMPLETED else None,
        result.error_code,
        result.error_message,
        now_s if terminal else None,
        optional_epoch(result.purge_after) if terminal else None,
    )


def reclaim_expired(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    *,
    now: datetime,
    limit: int,
    max_failures: int | None,
    retention: timedelta,
) -> int:
    """Expired leases back to pending (a failure), or to dead at the failure backstop."""
    if limit <= 0:
        return 0
    now_s = epoch(now)
    rows = conn.execute(queries["expired_leases"], (now_s, limit)).fetchall()
    updates: list[tuple[Any, ...]] = []
    entries: list[tuple[Any, ...]] = []
    purge_after = epoch(now + retention)
    for job_id, token, run_count, failure_count in rows:
        failures = failure_count + 1
        if max_failures is not None and failures >= max_failures:
            message = (
                f"the lease expired; {failures} failed runs reach the backstop of {max_failures}"
            )
            updates.append(
                (job_id, token, "dead", None, None, 1, None, BACKSTOP_REACHED, message, now_s,
                 purge_after)
            )
            entry = JournalEntry(
                at=now, run=run_count, event=JournalEvent.DEAD, note=message,
                error_code=BACKSTOP_REACHED, error_message=message,
            )
        else:
            message = "the lease expired before the worker reported the run's end"
            updates.append(
                (job_id, token, "pending", now_s, None, 1, None, LEASE_EXPIRED, message, None, None)
            )
            entry = JournalEntry(
                at=now, run=run_count, event=JournalEvent.LEASE_EXPIRED, note=message,
                error_code=LEASE_EXPIRED, error_message=message,
            )
        entries.append(journal_params(job_id, entry))
    if updates:
        conn.executemany(queries["end_run"], updates)
        conn.executemany(queries["insert_journal"], entries)
    return len(updates)
