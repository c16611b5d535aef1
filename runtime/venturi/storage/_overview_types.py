"""What the operator dashboard reads through the storage: an overview of every queue,
dead jobs grouped by error, the workers holding leases, one job's lease.

Counts on a large table are not exact: counting a million rows on every page
load is what a dashboard must not do. A backend counts exactly while its jobs
table is small (``exact_up_to`` rows, from the table's own size estimate),
and above that reads a fixed sample of the table's pages and scales the
counts up (``CountBasis.SAMPLED``, with the percentage read), so that a
page's cost stays bounded whatever the size of the table. The page says
which it shows.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


class CountBasis(enum.StrEnum):
    EXACT = "exact"  # every row counted
    SAMPLED = "sampled"  # counted in a sample of the table's pages, scaled up


@dataclass(frozen=True, slots=True)
class Basis:
    """How the counts of a view were obtained."""

    basis: CountBasis = CountBasis.EXACT
    sample_percent: float = 100.0  # the share of the table's pages read
    table_rows: int = 0  # the jobs table's size, as the backend estimates it

    @property
    def exact(self) -> bool:
        return self.basis is CountBasis.EXACT


@dataclass(frozen=True, slots=True)
class QueueOverview:
    """One queue: its pause, and its jobs by state. ``scheduled`` are pending jobs whose
    run time has not come; ``oldest_ready_at`` the earliest run time of a ready one."""

    queue: str
    paused_at: datetime | None = None
    pause_reason: str | None = None
    pending: int = 0
    scheduled: int = 0
    running: int = 0
    dead: int = 0
    oldest_ready_at: datetime | None = None

    @property
    def paused(self) -> bool:
        return self.paused_at is not None


@dataclass(frozen=True, slots=True)
class MinuteCounts:
    """Jobs that finished in one minute (``minute``: its start), completed and dead."""

    minute: datetime
    completed: int = 0
    dead: int = 0


@dataclass(frozen=True, slots=True)
class Overview:
    queues: tuple[QueueOverview, ...]
    throughput: tuple[MinuteCounts, ...]  # the last hour, oldest minute first, every minute
    basis: Basis


@dataclass(frozen=True, slots=True)
class DeadGroup:
    """Dead jobs sharing an error code (None: ended without one), with one of them."""

    error_code: str | None
    count: int
    first_seen: datetime | None  # the earliest finish among them
    last_seen: datetime | None
    sample_id: str
    sample_message: str | None


@dataclass(frozen=True, slots=True)
class DeadGroups:
    groups: tuple[DeadGroup, ...]  # the largest first
    basis: Basis


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """A worker holding leases now: how many jobs, in which queues, and when the leases it
    holds expire (a worker extends them with each heartbeat)."""

    worker_id: str
    jobs: int
    queues: tuple[str, ...]
    first_expiry: datetime | None
    last_expiry: datetime | None


@dataclass(frozen=True, slots=True)
class JobLease:
    """Who holds a job's lease (its last holder, for a job that is no longer running)."""

    worker_id: str | None
    lease_expires_at: datetime | None
