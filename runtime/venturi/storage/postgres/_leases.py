"""Leases that simply ran out: back to pending (a failure), or dead at the backstop.

Runs in one transaction: the expired rows are locked with ``SKIP LOCKED`` (so
several workers reclaiming at once split the work instead of queueing on
each other) and ended through the same fenced ``end_runs`` statement as a
worker's results, with the lease token read under the lock as the fence.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from venturi.storage._expiry import expired_lease_result, started_too_late
from venturi.storage.postgres._rows import aware, finish_params
from venturi.storage.postgres._steps import Steps, Stmt


def reclaim_expired(
    queries: dict[str, str],
    *,
    now: datetime,
    limit: int,
    max_failures: int | None,
    retention: timedelta,
) -> Steps[int]:
    if limit <= 0 or started_too_late(now):  # e.g. retried through an outage: see _expiry
        return 0
    rows = yield Stmt(queries["expired_leases"], {"now": aware(now), "limit": limit})
    if not rows:
        return 0
    purge_after = now + retention
    expired = [
        expired_lease_result(
            job_id, token, run_count, failures,
            now=now, max_failures=max_failures, purge_after=purge_after, started=started,
            row_key=seq,
        )
        for job_id, token, run_count, failures, started, seq in rows
    ]  # fmt: skip
    ended = yield Stmt(queries["end_runs"], finish_params(expired, aware(now)))
    return sum(1 for (job_id,) in ended if job_id is not None)
