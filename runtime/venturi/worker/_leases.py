"""The leases a worker holds, and the heartbeat that keeps them.

Every claimed job stays in the table until its result is handed to storage.
The heartbeat extends all of them at once; a job missing from the answer
lost its lease (an operator cancelled it, or it expired and another worker
took it over). Its run is told to stop through its context, a job not yet
started is not started at all, and whatever a lost run ends with is dropped:
storage's fence would reject it anyway, and saying so in the log is more
useful than a silent rejection.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from venturi.storage._protocol import AsyncStorage
from venturi.storage._run_types import ClaimedJob

log = logging.getLogger("venturi.worker")


class LeaseTable:
    """The claimed jobs by id (each carries its lease token), and the ids whose lease was lost."""

    __slots__ = ("held", "lost")

    def __init__(self) -> None:
        self.held: dict[str, ClaimedJob] = {}
        self.lost: set[str] = set()

    def add_all(self, jobs: list[ClaimedJob]) -> None:
        held = self.held
        lost = self.lost
        for job in jobs:
            held[job.id] = job  # a new lease replaces an older one of the same job
            if lost:
                lost.discard(job.id)

    def release(self, job: ClaimedJob) -> bool:
        """Forget the lease of a run whose result goes to storage now.

        False when the result must not be sent: the lease was lost meanwhile, or
        this worker holds a newer lease of the same job (this run is stale).
        """
        held = self.held
        current = held.get(job.id)
        if current is None or current.lease_token != job.lease_token:
            return False
        del held[job.id]
        if self.lost and job.id in self.lost:
            self.lost.remove(job.id)
            return False
        return True

    def snapshot(self) -> list[tuple[str, str]]:
        return [(job_id, job.lease_token) for job_id, job in self.held.items()]

    def mark_lost(self, job_id: str, token: str) -> ClaimedJob | None:
        """Record a lost lease; return its job, or None if the lease is no longer held here."""
        job = self.held.get(job_id)
        if job is None or job.lease_token != token:
            return None
        self.lost.add(job_id)
        return job

    def __len__(self) -> int:
        return len(self.held)


async def heartbeat_once(
    storage: AsyncStorage, table: LeaseTable, *, lease_duration: timedelta, now: datetime
) -> list[ClaimedJob]:
    """Extend every held lease once; return the jobs found to have lost theirs."""
    leases = table.snapshot()
    if not leases:
        return []
    held = await storage.heartbeat(leases, lease_duration=lease_duration, now=now)
    lost: list[ClaimedJob] = []
    for job_id, token in leases:
        if job_id in held:
            continue
        # A job whose result was written while the heartbeat was in flight is gone
        # from the table: finished, not lost.
        job = table.mark_lost(job_id, token)
        if job is not None:
            lost.append(job)
            log.warning(
                "lease lost (cancelled, or expired and reclaimed): the run is asked to stop "
                "and its result will be dropped",
                extra={"event": "lease_lost", "job_id": job_id, "kind": job.kind},
            )
    return lost
