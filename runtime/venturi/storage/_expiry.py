"""What becomes of a run whose lease ran out: one rule for every backend.

A worker that vanished (killed, partitioned, stuck past its lease) never
reports its run's end. The backend reclaims such a job by ending the run on
its behalf, as a failure: back to pending at once, or dead once the failures
reach the backstop. Both backends turn these ``RunResult`` values into rows
through the same fenced path as a worker's own results.

A reclaimed job keeps its ``run_at``, and so its place in line: it was due
when its lost run was claimed, so it runs again ahead of the jobs enqueued
since, instead of waiting behind the whole backlog a crash left behind.

A reclaim pass that could only start long after it was asked (its ``now``)
reclaims nothing: it waited for SQLite's write lock, held by another process,
or for an unreachable server, and whatever held it up held up the leases'
owners too. Their leases ran out because they could not renew them, not
because they vanished; taking them the moment the wait ends would throw away
the work they finished meanwhile. The worker asks again at its next pass,
after they had time to renew (``venturi.worker._holdups``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from venturi._clock import utcnow
from venturi._failures import FailureCode
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage._run_types import Resolution, RunResult

LEASE_EXPIRED = FailureCode.LEASE_EXPIRED.value
BACKSTOP_REACHED = FailureCode.BACKSTOP_REACHED.value

#: A reclaim pass that starts later than this after its ``now`` does nothing.
RECLAIM_START_WINDOW = timedelta(seconds=1)


def started_too_late(now: datetime) -> bool:
    """Whether a reclaim asked at ``now`` only got to run after a long wait (see above)."""
    return utcnow() - now > RECLAIM_START_WINDOW


def expired_lease_result(
    job_id: str,
    lease_token: str,
    run_count: int,
    failure_count: int,
    *,
    now: datetime,
    max_failures: int | None,
    purge_after: datetime,
    started: bool = True,
    row_key: int = 0,
) -> RunResult:
    """End an expired run: a retry in the job's own place, or dead at ``max_failures``.

    A job whose run never started (claimed ahead by a worker that vanished
    before starting it) is returned instead: no run, no failure, its place kept.
    """
    if not started:
        return returned_result(
            job_id, lease_token, run_count, now=now,
            note="the lease expired before the run started (its worker vanished)",
            row_key=row_key,
        )  # fmt: skip
    failures = failure_count + 1
    if max_failures is not None and failures >= max_failures:
        message = f"the lease expired; {failures} failed runs reach the backstop of {max_failures}"
        entry = JournalEntry(
            at=now, run=run_count, event=JournalEvent.DEAD, note=message,
            error_code=BACKSTOP_REACHED, error_message=message,
        )  # fmt: skip
        return RunResult(
            job_id, lease_token, Resolution.DEAD, entry,
            error_code=BACKSTOP_REACHED, error_message=message, purge_after=purge_after,
            row_key=row_key,
        )  # fmt: skip
    message = "the lease expired before the worker reported the run's end"
    entry = JournalEntry(
        at=now, run=run_count, event=JournalEvent.LEASE_EXPIRED, note=message,
        error_code=LEASE_EXPIRED, error_message=message,
    )  # fmt: skip
    return RunResult(
        job_id, lease_token, Resolution.RETRY, entry,
        error_code=LEASE_EXPIRED, error_message=message, row_key=row_key,
    )  # fmt: skip


def returned_result(
    job_id: str,
    lease_token: str,
    run_count: int,
    *,
    now: datetime,
    note: str,
    run_at: datetime | None = None,
    row_key: int = 0,
) -> RunResult:
    """A claimed job that never started goes back to pending as it was: the claim's run is
    given back (the journal entry records the run count without it), its run time kept
    unless ``run_at`` is given (a job left for a newer worker waits a while)."""
    entry = JournalEntry(at=now, run=run_count - 1, event=JournalEvent.RETURNED, note=note)
    return RunResult(job_id, lease_token, Resolution.RETURNED, entry, run_at=run_at, row_key=row_key)
