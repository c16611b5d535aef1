"""The data that crosses the storage boundary.

Storage sees kinds, JSON text and timestamps, never task classes. Type
safety is recovered in the runtime at exactly two points: at enqueue (typed
task -> ``NewJob``) and at dispatch (``ClaimedJob`` -> typed task).
All datetimes are timezone-aware UTC.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from venturi._journal import JournalEntry
from venturi._merge import MergeKind


class JobState(enum.StrEnum):
    PENDING = "pending"  # waiting to run (new, paused, retrying, or handed back)
    RUNNING = "running"  # leased by a worker
    COMPLETED = "completed"
    DEAD = "dead"  # permanent failure or backstop reached
    CANCELLED = "cancelled"


TERMINAL_STATES = frozenset({JobState.COMPLETED, JobState.DEAD, JobState.CANCELLED})


class NewJob(NamedTuple):
    """A job ready to be stored: everything encoded, nothing left to compute.

    ``NewJob``, ``EnqueueRequest`` and ``EnqueueResult`` are ``NamedTuple``s for
    the reason given at ``ClaimedJob``: an enqueue builds one of each per job.
    """

    id: str
    kind: str
    queue: str
    priority: int
    payload: str  # JSON text
    carry: str  # JSON text of the fresh carry
    dedup_key: str | None
    concurrency_key: str | None
    run_at: datetime
    version: int = 1  # the task's VERSION: the shape the payload and carry are written in
    headers: str | None = None  # JSON object of strings from the hooks (a trace context)


@dataclass(frozen=True, slots=True)
class DecodeFailure:
    """A part of a stored job that did not decode, and why.

    ``field`` is ``"payload"``, ``"carry"`` or ``"output"`` (JSON that does not
    decode, or no longer fits the task's type), or the stored column that
    could not be read (``"kind"``, ``"state"``, ``"journal[2].note"``...):
    bytes that are not UTF-8, a value of the wrong type, a state this
    runtime does not know. The job is still returned, with the raw value.
    """

    field: str
    message: str


@dataclass(frozen=True, slots=True)
class StoredJob:
    """A job row as read back, with its journal (oldest entry first).

    ``decode_failures`` lists the columns the storage could not read as they
    should be; each such value is shown in a safe form (bytes that are not
    UTF-8 as ``\\xNN``), never raised.
    """

    id: str
    kind: str
    queue: str
    priority: int
    state: JobState
    payload: str
    carry: str
    dedup_key: str | None
    concurrency_key: str | None
    run_at: datetime
    created_at: datetime
    run_count: int
    failure_count: int
    output: str | None
    error_code: str | None
    error_message: str | None
    finished_at: datetime | None
    journal: tuple[JournalEntry, ...] = ()
    decode_failures: tuple[DecodeFailure, ...] = ()
    payload_version: int = 1  # the version of the task's shape the payload was written with
    carry_version: int = 1  # the same for the carry (a worker rewrites it after a run)


@dataclass(frozen=True, slots=True)
class MergeAction:
    """What an enqueue does to the existing pending job it collided with.

    For ``REPLACE`` and ``WITH`` the storage writes ``payload``, ``carry`` and
    ``priority`` into the existing row. For ``KEEP`` it changes nothing but
    the journal. For ``INDEPENDENT`` it inserts the new job as its own row
    (without a dedup key, so it never becomes a merge candidate itself).
    Every kind but ``INDEPENDENT`` appends ``journal_entry`` to the existing row.
    """

    kind: MergeKind
    payload: str | None = None
    carry: str | None = None
    priority: int | None = None
    journal_entry: JournalEntry | None = None
    version: int = 1  # of the payload and carry written (REPLACE, WITH)


#: Called by storage, inside its enqueue transaction, with the locked candidate row.
MergeDecider = Callable[[StoredJob], MergeAction]


class EnqueueRequest(NamedTuple):
    job: NewJob
    decide: MergeDecider | None  # None when the job has no dedup key
    # Former kinds of the task (its ALIASES): a pending job stored under one of them with the
    # same dedup key is a merge candidate too, so a rename never doubles a deduplicated job.
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RequestBatch:
    """The requests of one ``enqueue_many``, encoded as they are taken (see
    ``Queue.enqueue_many``), with what is known of them up front: ``plain`` when
    none has a dedup key, so a backend may send them all without waiting for any
    result. Iterable once."""

    count: int
    plain: bool
    requests: Iterator[EnqueueRequest]

    def __iter__(self) -> Iterator[EnqueueRequest]:
        return self.requests


class EnqueueOutcome(enum.StrEnum):
    INSERTED = "inserted"  # no candidate: a new row
    KEPT = "kept"  # Keep: the existing job is unchanged
    REPLACED = "replaced"  # Replace: the existing job took the new payload, carry reset
    MERGED = "merged"  # With: the existing job took a computed payload and carry
    INDEPENDENT = "independent"  # Independent: a new row beside the existing one


class EnqueueResult(NamedTuple):
    """What an enqueue did, and the id of the job that now carries the work."""

    job_id: str
    outcome: EnqueueOutcome
    existing_job_id: str | None = None  # the collided job, for INDEPENDENT

    @property
    def inserted(self) -> bool:
        return self.outcome in (EnqueueOutcome.INSERTED, EnqueueOutcome.INDEPENDENT)


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
    journal: tuple[JournalEntry, ...]  # history before this run
    payload_version: int = 1  # the versions of the task's shape the payload and carry
    carry_version: int = 1  # were written with (the worker upgrades older ones)
    headers: str | None = None  # what the enqueue's hooks stored with the job (JSON), if any


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


@dataclass(frozen=True, slots=True)
class JobFilter:
    kinds: tuple[str, ...] = ()
    states: tuple[JobState, ...] = ()
    queues: tuple[str, ...] = ()
    limit: int = 100
    before_id: str | None = None  # page backwards by id (newest first)


@dataclass(frozen=True, slots=True)
class JobSelection:
    """The jobs a bulk operation (``Queue.cancel_jobs``, ``Queue.retry_jobs``) acts on.

    Empty tuples mean any; every given criterion must hold. ``created_before``
    selects jobs enqueued before that time (``--older-than`` on the command line).
    """

    kinds: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()
    states: tuple[JobState, ...] = ()
    created_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class JobCount:
    """How many jobs a selection matches, by state, and the highest matching id.

    A bulk operation stops at ``last_id``: jobs enqueued after the count are
    not touched, so the count printed before acting is the most it can change.
    """

    by_state: dict[JobState, int] = field(default_factory=dict[JobState, int])
    last_id: str | None = None

    @property
    def total(self) -> int:
        return sum(self.by_state.values())


class BulkBatch(NamedTuple):
    """One committed batch of a bulk operation."""

    changed: int  # jobs the batch changed
    last_id: str | None  # the highest id the batch looked at; None: nothing was left


@dataclass(frozen=True, slots=True)
class QueueStats:
    """One queue: paused or not, its backlog, and how long its oldest ready job has waited.

    Ready jobs are pending ones whose ``run_at`` has come; ``oldest_ready_at`` is
    the earliest such ``run_at`` (the time that job became ready).
    """

    queue: str
    paused_at: datetime | None = None
    pause_reason: str | None = None
    pending: int = 0
    ready: int = 0
    running: int = 0
    oldest_ready_at: datetime | None = None

    @property
    def paused(self) -> bool:
        return self.paused_at is not None


class ScheduleRecord(NamedTuple):
    """A schedule as a worker registers it, for ``venturi stats`` (not for correctness)."""

    name: str  # the task's kind: one schedule per task
    kind: str
    spec: str  # JSON: cron or every_seconds, timezone, missed
    next_slot_at: datetime | None


@dataclass(frozen=True, slots=True)
class ScheduleInfo:
    """A schedule as ``venturi stats`` shows it: its next slot and the last one enqueued."""

    name: str
    kind: str
    spec: str
    next_slot_at: datetime | None
    updated_at: datetime
    last_slot_at: datetime | None = None
    last_job_id: str | None = None


@dataclass(frozen=True, slots=True)
class KindStats:
    kind: str
    counts: dict[JobState, int] = field(default_factory=dict[JobState, int])
    oldest_pending_at: datetime | None = None
    finished_last_minutes: dict[int, int] = field(default_factory=dict[int, int])


class CancelOutcome(enum.StrEnum):
    CANCELLED = "cancelled"  # was pending: now cancelled
    FENCED = "fenced"  # was running: cancelled, the lease revoked
    ALREADY_FINISHED = "already_finished"
    NOT_FOUND = "not_found"


class BacklogRow(NamedTuple):
    """A stored job as ``venturi check-backlog`` reads it: what decoding it needs."""

    id: str
    kind: str
    state: str
    payload: str
    carry: str
    payload_version: int
    carry_version: int


class BacklogRewrite(NamedTuple):
    """An upgraded job written back at the current version (``check-backlog --upgrade``).

    ``payload`` (``carry``) is the new JSON text, or ``None`` to leave it; it is
    written only while the job still has the version that was read
    (``payload_version``, ``carry_version``) and is not running, so a job that
    a worker claimed or rewrote since is left alone.
    """

    id: str
    version: int  # the version written
    payload: str | None
    payload_version: int
    carry: str | None
    carry_version: int


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do, so the runtime never silently emulates a missing feature."""

    name: str
    multi_host: bool  # workers on several machines
    listen_notify: bool  # idle workers are woken at once on enqueue
    transactional_enqueue: bool  # enqueue(task, conn=...) joins the application's transaction
    skip_locked: bool
