"""Queue controls (pause, resume, per-queue statistics) and bulk cancel and retry, as ``Steps``.

The same semantics as the SQLite backend's ``_queues`` (the conformance
suite holds both to them). A pause is a row of ``queue_pauses``, which the
claim statement reads; a resume also NOTIFYs the queue, so idle workers
claim from it at once. A bulk batch locks its jobs in id order and changes
each with the very statement a single cancel or retry uses, pipelined, in
one transaction: all of the batch or none of it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from venturi.storage import _controls
from venturi.storage._admin_types import BulkBatch, JobCount, JobSelection, QueueStats, id_range
from venturi.storage.postgres._operator import cancel_stmt, retry_stmt
from venturi.storage.postgres._rows import aware, utc
from venturi.storage.postgres._steps import Steps, Stmt


def pause(queries: dict[str, str], queue: str, now: datetime, reason: str | None) -> Steps[bool]:
    """Pause ``queue``; False if it was paused already (its first pause is kept)."""
    rows = yield Stmt(queries["pause_queue"], {"queue": queue, "now": aware(now), "reason": reason})
    return bool(rows)


def resume(queries: dict[str, str], queue: str) -> Steps[bool]:
    """Resume ``queue``; False if it was not paused."""
    rows = yield Stmt(queries["resume_queue"], {"queue": queue})
    return bool(rows)


def queue_stats(queries: dict[str, str], now: datetime) -> Steps[list[QueueStats]]:
    """Every queue that has pending or running jobs, or is paused, by name."""
    pauses = {queue: (utc(at), reason) for queue, at, reason in (yield Stmt(queries["queue_pauses"]))}
    pending = {
        queue: (count, ready, None if oldest is None else utc(oldest))
        for queue, count, ready, oldest in (
            yield Stmt(queries["pending_by_queue"], {"now": aware(now)})
        )
    }
    running = {queue: count for queue, count in (yield Stmt(queries["running_by_queue"]))}
    return _controls.queue_stats(pauses, pending, running)


def _selection_params(selection: JobSelection) -> dict[str, Any]:
    params: dict[str, Any] = {
        "states": [str(state) for state in selection.states],
        "kinds": list(selection.kinds) or None,
        "queues": list(selection.queues) or None,
        "created_before": None if selection.created_before is None else aware(selection.created_before),
        "tags": list(selection.tags) or None,
        "created_after": None if selection.created_after is None else aware(selection.created_after),
        "dedup_key": selection.dedup_key,
        "error_code": selection.error_code,
    }
    params["id_from"], params["id_to"] = id_range(
        selection.id_prefix, selection.created_after, selection.created_before
    )
    return params


def count(queries: dict[str, str], selection: JobSelection) -> Steps[JobCount]:
    return _controls.job_count((yield Stmt(queries["count_selected"], _selection_params(selection))))


def count_capped(queries: dict[str, str], selection: JobSelection, cap: int) -> Steps[JobCount]:
    params = _selection_params(selection)
    params["cap"] = cap
    return _controls.job_count((yield Stmt(queries["count_selected_capped"], params)))


def _lock_next(
    queries: dict[str, str],
    selection: JobSelection,
    limit: int,
    after_id: str | None,
    up_to_id: str,
) -> Stmt:
    params = _selection_params(selection)
    params.update(after_id=after_id, up_to_id=up_to_id, limit=limit)
    return Stmt(queries["lock_selected"], params)


def cancel_batch(
    queries: dict[str, str],
    selection: JobSelection,
    *,
    now: datetime,
    limit: int,
    after_id: str | None,
    up_to_id: str,
    retention: timedelta,
) -> Steps[BulkBatch]:
    """Cancel the next ``limit`` selected jobs (the selection's states are pending or running)."""
    rows = yield _lock_next(queries, selection, limit, after_id, up_to_id)
    for job_id, state, run_count in rows:
        yield cancel_stmt(queries, job_id, state, run_count, now, retention, wait=False)
    return _batch(rows)


def retry_batch(
    queries: dict[str, str],
    selection: JobSelection,
    *,
    now: datetime,
    limit: int,
    after_id: str | None,
    up_to_id: str,
) -> Steps[BulkBatch]:
    """Send the next ``limit`` selected jobs (dead or cancelled) back to pending, one after
    the other: a job meeting a pending job with its dedup key gives the key up."""
    rows = yield _lock_next(queries, selection, limit, after_id, up_to_id)
    for job_id, state, run_count in rows:
        yield retry_stmt(queries, job_id, state, run_count, now, wait=False)
    return _batch(rows)


def _batch(rows: list[tuple[Any, ...]]) -> BulkBatch:
    # max, not the last row: a locked row re-checked after a wait may come out of order.
    ids = [job_id for job_id, _state, _runs in rows]
    return BulkBatch(len(ids), max(ids) if ids else None)
