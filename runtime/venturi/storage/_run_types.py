"""The data of a run that crosses the storage boundary: a claim, the claimed job, its end.

The worker's side of ``_types`` (see there), imported by the worker and the
backends, never by ``import venturi``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple, cast

from venturi._journal import JournalEntry
from venturi._tuples import check_fields


class ClaimLimit(NamedTuple):
    """A rate limit the claim enforces: at most ``max`` runs of the jobs of ``kinds``
    start in any ``per_s`` seconds (per value of the job's rate key when ``keyed``).
    ``name`` (the task's kind) names its limit keys, whichever alias a job is stored under."""

    name: str
    kinds: tuple[str, ...]
    max: int
    per_s: float
    keyed: bool = False


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    queues: tuple[str, ...]  # claim only from these queues
    kinds: tuple[str, ...]  # claim only kinds this worker has handlers for
    limit: int
    lease_token: str
    lease_duration: timedelta
    worker_id: str
    #: How many of the claimed jobs (the first, in claim order) start at once: their runs
    #: are marked started by the claim itself. The rest wait in the worker (prefetch) and
    #: are marked when they start (``finish(started=...)``).
    start: int = 0
    #: The rate limits of the registered tasks. A claim that requests none of their kinds
    #: takes the plain path, as fast as without them; limited jobs are only claimed to
    #: start at once (up to ``start``), never held ahead, so a slot's time is a run's start.
    rate_limits: tuple[ClaimLimit, ...] = ()

    def limited(self) -> tuple[ClaimLimit, ...]:
        """The limits of the requested kinds."""
        if not self.rate_limits:
            return ()
        kinds = set(self.kinds)
        return tuple(limit for limit in self.rate_limits if kinds.intersection(limit.kinds))


class ClaimedJob(NamedTuple):
    """A job leased to a worker. ``run_count`` already includes the current run (the claim
    counts it; a job handed back or reclaimed before it started gets it back, ``RETURNED``).

    ``ClaimedJob``, ``RunResult`` and ``JournalEntry`` are immutable
    ``NamedTuple``s rather than frozen dataclasses: the worker builds each once
    per run, and a frozen dataclass's ``__init__`` (``object.__setattr__`` per
    field) costs about 2 µs more per object.
    """

    id: str
    kind: str
    queue: str
    priority: int
    payload: str
    carry: str
    run_count: int
    failure_count: int
    lease_token: str
    lease_expires_at: datetime
    concurrency_key: str | None
    journal: tuple[JournalEntry, ...]  # history before this run: its last HISTORY_WINDOW entries
    payload_version: int = 1  # the versions of the task's shape the payload and carry
    carry_version: int = 1  # were written with (the worker upgrades older ones)
    headers: str | None = None  # what the enqueue's hooks stored with the job (JSON), if any
    journal_count: int = 0  # entries in the job's whole journal (``journal`` is the window)
    #: The backend's own key of the job's row (PostgreSQL: its ``seq``), handed back in the
    #: run's ``RunResult`` so that ending the run finds the row without a lookup by id;
    #: 0 where the backend keeps none (SQLite).
    row_key: int = 0


class Resolution(enum.StrEnum):
    """How a run ends, as storage applies it."""

    COMPLETED = "completed"  # -> completed
    PAUSED = "paused"  # -> pending at run_at; carry kept; no failure counted
    RETRY = "retry"  # -> pending at run_at; failure_count + 1
    DEAD = "dead"  # -> dead; failure_count + 1
    RELEASED = "released"  # -> pending now; graceful shutdown; no failure counted
    RETURNED = "returned"  # -> pending, never started: run_count back, no failure, run_at kept
    # (or the result's: a job left for a newer worker waits)
    CANCELLED = "cancelled"  # -> cancelled (the handler saw a cancel request)


class RunResult(NamedTuple):
    """The fenced end of one run: applied only if ``lease_token`` still holds the job."""

    job_id: str
    lease_token: str
    resolution: Resolution
    journal_entry: JournalEntry
    carry: str | None = None  # new carry JSON (PAUSED, RETRY, RELEASED); None keeps it
    # Next eligibility (PAUSED, RETRY, RELEASED, RETURNED). None keeps the job's own run_at, its place
    # in line: a job was due when it was claimed, so it is eligible again at once, ahead
    # of the jobs that became due after it (a reclaimed or handed-back job).
    run_at: datetime | None = None
    output: str | None = None  # COMPLETED with a typed output
    error_code: str | None = None
    error_message: str | None = None
    purge_after: datetime | None = None  # terminal rows may be pruned after this time
    carry_version: int = 1  # the version of the task's shape ``carry`` is written in
    #: COMPLETED of a task with a unique period: its dedup key stays taken until then
    #: (``unique_keys``), written in the completion's transaction.
    unique_until: datetime | None = None
    #: The claimed job's ``row_key``; 0 when unknown (the backend then finds the row by id).
    row_key: int = 0


#: A ``ClaimedJob``'s and a ``RunResult``'s fields in their order, as plain tuples, and
#: both built as such (``venturi._tuples``): a claim makes one ``ClaimedJob`` per job, a
#: batch of results one ``RunResult``.
ClaimedJobFields = tuple[
    str, str, str, int, str, str, int, int, str, datetime, str | None,
    tuple[JournalEntry, ...], int, int, str | None, int, int,
]  # fmt: skip
RunResultFields = tuple[
    str, str, Resolution, JournalEntry, str | None, datetime | None, str | None, str | None,
    str | None, datetime | None, int, datetime | None, int,
]  # fmt: skip
NEW_CLAIMED_JOB = cast(
    "Callable[[type[ClaimedJob], ClaimedJobFields], ClaimedJob]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
NEW_RUN_RESULT = cast(
    "Callable[[type[RunResult], RunResultFields], RunResult]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
check_fields(ClaimedJobFields, ClaimedJob)
check_fields(RunResultFields, RunResult)
