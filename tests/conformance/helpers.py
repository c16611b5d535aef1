"""Small builders shared by the conformance tests: requests, claims and run results."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from venturi import Task
from venturi._enqueue import build_request, utcnow
from venturi._ids import new_lease_token
from venturi._journal import JournalEntry, JournalEvent
from venturi.storage import ClaimedJob, ClaimRequest, EnqueueRequest, Resolution, RunResult

from tests.conformance.tasks import Digest, Other, Plain

ALL_KINDS = (Digest.KIND, Plain.KIND, Other.KIND)


def request(task: Task[Any], **kwargs: Any) -> EnqueueRequest:
    """``build_request`` at the current time (``run_at``/``delay``/``queue`` pass through)."""
    return build_request(task, now=utcnow(), **kwargs)


def claim_request(
    *,
    queues: tuple[str, ...] = ("default",),
    kinds: tuple[str, ...] = ALL_KINDS,
    limit: int = 10,
    lease: timedelta = timedelta(seconds=30),
    worker_id: str = "worker-1",
    start: int = 0,
) -> ClaimRequest:
    return ClaimRequest(
        queues=queues,
        kinds=kinds,
        limit=limit,
        lease_token=new_lease_token(),
        lease_duration=lease,
        worker_id=worker_id,
        start=start,
    )


_EVENT = {
    Resolution.COMPLETED: JournalEvent.COMPLETED,
    Resolution.PAUSED: JournalEvent.PAUSED,
    Resolution.RETRY: JournalEvent.FAILED,
    Resolution.DEAD: JournalEvent.DEAD,
    Resolution.RELEASED: JournalEvent.RELEASED,
    Resolution.RETURNED: JournalEvent.RETURNED,
    Resolution.CANCELLED: JournalEvent.CANCELLED,
}


def result(
    job: ClaimedJob,
    resolution: Resolution,
    *,
    now: datetime,
    token: str | None = None,
    note: str | None = None,
    **fields: Any,
) -> RunResult:
    """The end of ``job``'s current run, with the journal entry a worker would write."""
    entry = JournalEntry(
        at=now,
        run=job.run_count - 1 if resolution is Resolution.RETURNED else job.run_count,
        event=_EVENT[resolution],
        note=note,
        error_code=fields.get("error_code"),
        error_message=fields.get("error_message"),
    )
    fields.setdefault("row_key", job.row_key)  # as the worker's results carry it
    return RunResult(
        job_id=job.id,
        lease_token=job.lease_token if token is None else token,
        resolution=resolution,
        journal_entry=entry,
        **fields,
    )
