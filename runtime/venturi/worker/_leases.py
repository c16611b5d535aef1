"""The leases a worker holds, and the heartbeat that keeps them.

Every claimed job stays in the table until its result is handed to storage.
The heartbeat extends all of them at once; a job missing from the answer
lost its lease (an operator cancelled it, or it expired and another worker
took it over). Its run is told to stop through its context, and whatever it
ends with is dropped: storage's fence would reject it anyway, and saying so
in the log is more useful than a silent rejection.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from venturi.storage._protocol import Storage

log = logging.getLogger("venturi.worker")


class LeaseTable:
    """job_id -> (lease token, the run's cancel event, kind); plus the ids whose lease was lost."""

    __slots__ = ("_held", "lost")

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, asyncio.Event, str]] = {}
        self.lost: set[str] = set()

    def add(self, job_id: str, token: str, kind: str) -> asyncio.Event:
        event = asyncio.Event()
        self._held[job_id] = (token, event, kind)
        return event

    def release(self, job_id: str) -> bool:
        """Forget a lease whose result goes to storage now; False if it was lost meanwhile."""
        self._held.pop(job_id, None)
        if self.lost:
            try:
                self.lost.remove(job_id)
            except KeyError:
                return True
            return False
        return True

    def snapshot(self) -> list[tuple[str, str]]:
        return [(job_id, held[0]) for job_id, held in self._held.items()]

    def mark_lost(self, job_id: str, token: str) -> str | None:
        """Record a lost lease and tell its run to stop; return its kind, or None if the
        lease is no longer in the table."""
        held = self._held.get(job_id)
        if held is None or held[0] != token:
            return None
        self.lost.add(job_id)
        held[1].set()
        return held[2]

    def cancel_all(self) -> None:
        """Ask every run to stop (graceful shutdown)."""
        for held in self._held.values():
            held[1].set()

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._held


async def heartbeat_once(
    storage: Storage,
    table: LeaseTable,
    *,
    lease_duration: timedelta,
    now: datetime,
) -> int:
    """Extend every held lease once; return how many were found lost."""
    leases = table.snapshot()
    if not leases:
        return 0
    held = await storage.heartbeat(leases, lease_duration=lease_duration, now=now)
    lost = 0
    for job_id, token in leases:
        # A job finished while the heartbeat was in flight is simply gone from the table.
        if job_id in held:
            continue
        kind = table.mark_lost(job_id, token)
        if kind is not None:
            lost += 1
            log.warning(
                "lease lost (cancelled, or expired and reclaimed): the run is asked to stop "
                "and its result will be dropped",
                extra={
                    "event": "lease_lost",
                    "job_id": job_id,
                    "kind": kind,
                },
            )
    return lost
