"""Queue controls (pause, resume, per-queue statistics) and bulk cancel and retry.

A pause is a row of ``queue_pauses``; the claim reads that table inside its
own write transaction, so a queue paused before a claim begins is never
claimed from by it. Bulk operations walk the selection in id order, one
bounded batch per ``BEGIN IMMEDIATE`` transaction, so workers and producers
get the database between batches and each batch is all or nothing.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from venturi.storage import _controls
from venturi.storage._admin_types import BulkBatch, JobCount, JobSelection, QueueStats, id_range
from venturi.storage.sqlite._operator import cancel_rows, retry_rows
from venturi.storage.sqlite._rows import epoch, from_epoch


def pause(
    conn: sqlite3.Connection, queries: dict[str, str], queue: str, now: datetime, reason: str | None
) -> bool:
    """Pause ``queue``; False if it was paused already (its first pause is kept)."""
    return conn.execute(queries["pause_queue"], (queue, epoch(now), reason)).rowcount == 1


def resume(conn: sqlite3.Connection, queries: dict[str, str], queue: str) -> bool:
    """Resume ``queue``; False if it was not paused."""
    return conn.execute(queries["resume_queue"], (queue,)).rowcount == 1


def queue_stats(conn: sqlite3.Connection, queries: dict[str, str], now: datetime) -> list[QueueStats]:
    """Every queue that has pending or running jobs, or is paused, by name."""
    pauses = {queue: (from_epoch(at), reason) for queue, at, reason in conn.execute(queries["queue_pauses"])}
    pending = {
        queue: (count, ready or 0, None if oldest is None else from_epoch(oldest))
        for queue, count, ready, oldest in conn.execute(queries["pending_by_queue"], (epoch(now),))
    }
    running = dict(conn.execute(queries["running_by_queue"]).fetchall())
    return _controls.queue_stats(pauses, pending, running)


def _selection_params(selection: JobSelection) -> tuple[Any, ...]:
    return (
        json.dumps([str(state) for state in selection.states]),
        json.dumps(list(selection.kinds)),
        json.dumps(list(selection.queues)),
        None if selection.created_before is None else epoch(selection.created_before),
        None if selection.created_after is None else epoch(selection.created_after),
        selection.dedup_key,
        selection.error_code,
        *id_range(selection.id_prefix, selection.created_after, selection.created_before),
        json.dumps(list(selection.tags)),
    )


def count(conn: sqlite3.Connection, queries: dict[str, str], selection: JobSelection) -> JobCount:
    return _controls.job_count(conn.execute(queries["count_selected"], _selection_params(selection)))


def count_capped(
    conn: sqlite3.Connection, queries: dict[str, str], selection: JobSelection, cap: int
) -> JobCount:
    params = (*_selection_params(selection), cap)
    return _controls.job_count(conn.execute(queries["count_selected_capped"], params))


def _next_rows(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    selection: JobSelection,
    limit: int,
    after_id: str | None,
    up_to_id: str,
) -> list[tuple[str, str, int]]:
    params = (*_selection_params(selection), after_id, up_to_id, limit)
    return conn.execute(queries["next_selected"], params).fetchall()


def cancel_batch(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    selection: JobSelection,
    *,
    now: datetime,
    limit: int,
    after_id: str | None,
    up_to_id: str,
    retention: timedelta,
) -> BulkBatch:
    """Cancel the next ``limit`` selected jobs (the selection's states are pending or running)."""
    rows = _next_rows(conn, queries, selection, limit, after_id, up_to_id)
    if not rows:
        return BulkBatch(0, None)
    cancel_rows(conn, queries, rows, now, retention)
    last_id, _state, _runs = rows[-1]
    return BulkBatch(len(rows), last_id)


def retry_batch(
    conn: sqlite3.Connection,
    queries: dict[str, str],
    selection: JobSelection,
    *,
    now: datetime,
    limit: int,
    after_id: str | None,
    up_to_id: str,
) -> BulkBatch:
    """Send the next ``limit`` selected jobs (dead or cancelled) back to pending."""
    rows = _next_rows(conn, queries, selection, limit, after_id, up_to_id)
    if not rows:
        return BulkBatch(0, None)
    retry_rows(conn, queries, rows, now)
    last_id, _state, _runs = rows[-1]
    return BulkBatch(len(rows), last_id)
