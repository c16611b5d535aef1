"""Operator operations (inspect, cancel, retry, list, count, prune) as ``Steps``.

None of these is on a hot path; they favour one clear statement each over
cleverness, and match the SQLite backend's semantics line for line (the
conformance suite holds both to them).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from venturi._journal import JournalEntry, JournalEvent
from venturi._storable import could_be_stored
from venturi.storage._admin_types import (
    CancelOutcome,
    JobFilter,
    KindStats,
    RateLimitUse,
    id_range,
)
from venturi.storage._admin_types import rate_limit_use as rate_limit_use_row
from venturi.storage._types import JobState, StoredJob
from venturi.storage.postgres._rows import (
    aware,
    journal_params,
    stored_job,
    stored_job_with_journal,
    utc,
)
from venturi.storage.postgres._steps import Steps, Stmt

_TERMINAL = ("completed", "dead", "cancelled")


def get(queries: dict[str, str], job_id: str) -> Steps[StoredJob | None]:
    if not could_be_stored(job_id):
        return None
    rows = yield Stmt(queries["get_job"], {"id": job_id})
    if not rows:
        return None
    return stored_job_with_journal(rows[0])


def cancel(
    queries: dict[str, str], job_id: str, now: datetime, retention: timedelta
) -> Steps[CancelOutcome]:
    if not could_be_stored(job_id):
        return CancelOutcome.NOT_FOUND
    rows = yield Stmt(queries["job_state"], {"id": job_id})
    if not rows:
        return CancelOutcome.NOT_FOUND
    state, run_count = rows[0]
    if state in _TERMINAL:
        return CancelOutcome.ALREADY_FINISHED
    yield cancel_stmt(queries, job_id, state, run_count, now, retention)
    return CancelOutcome.FENCED if state == "running" else CancelOutcome.CANCELLED


_CANCEL_NOTE = {"pending": "cancelled", "running": "cancelled while running; the lease was revoked"}


def cancel_stmt(
    queries: dict[str, str],
    job_id: str,
    state: str,
    run_count: int,
    now: datetime,
    retention: timedelta,
    *,
    wait: bool = True,
) -> Stmt:
    """The statement cancelling one locked pending or running job, with its journal entry."""
    entry = JournalEntry(now, run_count, JournalEvent.CANCELLED, _CANCEL_NOTE[state])
    params = journal_params(entry)
    params.update(id=job_id, now=aware(now), purge_after=now + retention)
    return Stmt(queries["cancel_job"], params, wait=wait)


def retry(queries: dict[str, str], job_id: str, now: datetime) -> Steps[bool]:
    if not could_be_stored(job_id):
        return False
    rows = yield Stmt(queries["job_state"], {"id": job_id})
    if not rows or rows[0][0] not in ("dead", "cancelled"):
        return False
    state, run_count = rows[0]
    yield retry_stmt(queries, job_id, state, run_count, now)
    return True


def retry_stmt(
    queries: dict[str, str],
    job_id: str,
    state: str,
    run_count: int,
    now: datetime,
    *,
    wait: bool = True,
) -> Stmt:
    """The statement sending one locked dead or cancelled job back to pending."""
    entry = JournalEntry(now, run_count, JournalEvent.RETRIED, f"sent back to pending from {state}")
    params = journal_params(entry)
    params.update(id=job_id, now=aware(now))
    return Stmt(queries["retry_job"], params, wait=wait)


def list_jobs(queries: dict[str, str], job_filter: JobFilter) -> Steps[list[StoredJob]]:
    params: dict[str, Any] = {
        "kinds": list(job_filter.kinds) or None,
        "states": [str(s) for s in job_filter.states] or None,
        "queues": list(job_filter.queues) or None,
        "before_id": job_filter.before_id,
        "limit": job_filter.limit,
        "tags": list(job_filter.tags) or None,
        "dedup_key": job_filter.dedup_key,
        "error_code": job_filter.error_code,
        "created_before": None if job_filter.created_before is None else aware(job_filter.created_before),
        "created_after": None if job_filter.created_after is None else aware(job_filter.created_after),
    }
    params["id_from"], params["id_to"] = id_range(
        job_filter.id_prefix, job_filter.created_after, job_filter.created_before
    )
    rows = yield Stmt(queries["list_jobs"], params)
    return [stored_job(row) for row in rows]


def stats(
    queries: dict[str, str], now: datetime, windows_minutes: Sequence[int]
) -> Steps[list[KindStats]]:
    counts: dict[str, dict[JobState, int]] = {}
    oldest: dict[str, datetime] = {}
    finished: dict[str, dict[int, int]] = {}
    for kind, state, count, min_created in (yield Stmt(queries["counts_by_kind_and_state"])):
        counts.setdefault(kind, {})[JobState(state)] = count
        if state == "pending":
            oldest[kind] = utc(min_created)
    if windows_minutes:
        params = {"now": aware(now), "minutes": list(windows_minutes)}
        for kind, minutes, count in (yield Stmt(queries["finished_since"], params)):
            finished.setdefault(kind, {})[minutes] = count
    return [
        KindStats(
            kind=kind,
            counts=counts.get(kind, {}),
            oldest_pending_at=oldest.get(kind),
            finished_last_minutes={m: finished.get(kind, {}).get(m, 0) for m in windows_minutes},
        )
        for kind in sorted(counts.keys() | finished.keys())
    ]


def pending_counts_by_kind(
    queries: dict[str, str], queues: Sequence[str] = ()
) -> Steps[dict[str, int]]:
    rows = yield Stmt(queries["pending_counts_by_kind"], {"queues": list(queues) or None})
    return {kind: count for kind, count in rows}


def ready_counts_of_kinds(
    queries: dict[str, str], kinds: Sequence[str], now: datetime
) -> Steps[dict[str, int]]:
    rows = yield Stmt(queries["ready_counts_of_kinds"], {"kinds": list(kinds), "now": aware(now)})
    return {kind: count for kind, count in rows}


def reclaim_space(queries: dict[str, str]) -> Steps[None]:
    yield Stmt(queries["vacuum"])


def prune(queries: dict[str, str], now: datetime, limit: int) -> Steps[int]:
    if limit <= 0:
        return 0
    # Keys held past their jobs (uniqueness over a period) go once their period ends.
    yield Stmt(queries["forget_unique"], {"now": aware(now), "limit": limit}, wait=False)
    rows = yield Stmt(queries["prune"], {"now": aware(now), "limit": limit})
    return int(rows[0][0])


def rate_limit_use(queries: dict[str, str], now: datetime) -> Steps[list[RateLimitUse]]:
    rows = yield Stmt(queries["rate_limit_use"], {"now": aware(now)})
    return [rate_limit_use_row(*row) for row in rows]
