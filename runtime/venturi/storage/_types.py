"""The data that crosses the storage boundary on the producer's path.

Storage sees kinds, JSON text and timestamps, never task classes. Type
safety is recovered in the runtime at exactly two points: at enqueue (typed
task -> ``NewJob``) and at dispatch (``ClaimedJob`` -> typed task).
All datetimes are timezone-aware UTC.

This module holds what an enqueue builds and gets back, and a stored job as
read. The worker's types (claims, run results) are in ``_run_types``, the
operator's (filters, bulk operations, stats, schedules, the backlog,
capabilities) in ``_admin_types``: a producer process imports neither, so
``import venturi`` does not build their classes (a frozen dataclass costs
about 0.3 ms to define; tests/integration/test_import_footprint.py).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, cast

from venturi._journal import JournalEntry
from venturi._merge import MergeKind
from venturi._tuples import check_fields


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
    tags: tuple[str, ...] | None = None  # checked and each once (venturi._labels); None: none
    #: The value a keyed rate limit applies to (``Task.rate_key``); None without one.
    rate_key: str | None = None
    #: The entities the job refers to, each ``entity=value`` (``venturi._labels``); None: none.
    refs: tuple[str, ...] | None = None


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
    #: Entries in the job's whole journal; ``journal`` may hold only the most recent of
    #: them (``HISTORY_WINDOW``, for a merge's candidate).
    journal_count: int = 0
    tags: tuple[str, ...] = ()
    #: What the enqueue stored with the job (JSON of strings): the hooks' trace context,
    #: and the places of its sensitive values (``venturi._sensitive``).
    headers: str | None = None
    refs: tuple[str, ...] = ()  # ``entity=value`` each (venturi._labels)


@dataclass(frozen=True, slots=True)
class MergeAction:
    """What an enqueue does to the existing pending job it collided with.

    For ``REPLACE`` and ``WITH`` the storage writes ``payload``, ``carry`` and
    ``priority`` into the existing row, and ``run_at`` and ``queue`` when they
    are given (None leaves the job's own). For ``KEEP`` it changes nothing but
    the journal. For ``INDEPENDENT`` it inserts the new job as its own row,
    with its dedup key. Every kind but ``INDEPENDENT`` appends ``journal_entry``
    to the existing row.
    """

    kind: MergeKind
    payload: str | None = None
    carry: str | None = None
    priority: int | None = None
    journal_entry: JournalEntry | None = None
    version: int = 1  # of the payload and carry written (REPLACE, WITH)
    run_at: datetime | None = None  # the job's new run time (REPLACE, WITH)
    queue: str | None = None  # the job's new queue (REPLACE, WITH)
    #: The references of the payload written (REPLACE, WITH; None: it has none): they
    #: follow the payload, so the job is found by the entities its data now names.
    refs: tuple[str, ...] | None = None


#: Called by storage, inside its enqueue transaction, with the locked candidate row.
MergeDecider = Callable[[StoredJob], MergeAction]


class EnqueueRequest(NamedTuple):
    job: NewJob
    decide: MergeDecider | None  # None when the job has no dedup key
    # Former kinds of the task (its ALIASES): a pending job stored under one of them with the
    # same dedup key is a merge candidate too, so a rename never doubles a deduplicated job.
    aliases: tuple[str, ...] = ()
    #: The enqueue's time when the task has a unique period (``Task.UNIQUE_PERIOD``):
    #: a job with the key that completed within its period (``unique_keys``) is matched
    #: at this time, and the enqueue dropped. None without a period.
    unique_at: datetime | None = None


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
    #: Dropped: a job with the key completed within the task's unique period (its id)
    DUPLICATE = "duplicate"


class EnqueueResult(NamedTuple):
    """What an enqueue did, and the id of the job that now carries the work."""

    job_id: str
    outcome: EnqueueOutcome
    existing_job_id: str | None = None  # the collided job, for INDEPENDENT; matched, DUPLICATE

    @property
    def inserted(self) -> bool:
        return self.outcome in (EnqueueOutcome.INSERTED, EnqueueOutcome.INDEPENDENT)


def inserted_results(job_ids: Iterable[str]) -> list[EnqueueResult]:
    """``EnqueueResult(job_id, EnqueueOutcome.INSERTED)`` for each id: a batch enqueue's
    common answer. Built as the tuples they are: the ``__new__`` a NamedTuple generates
    (keyword and default handling) costs 0.44 µs per result, ``tuple.__new__`` 0.15 µs,
    3% of a batch enqueue of no-op jobs on SQLite."""
    new, inserted = _NEW_RESULT, EnqueueOutcome.INSERTED
    return [new(EnqueueResult, (job_id, inserted, None)) for job_id in job_ids]


_NEW_RESULT = cast(
    "Callable[[type[EnqueueResult], tuple[str, EnqueueOutcome, None]], EnqueueResult]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)


#: A ``NewJob``'s fields in their order, as a plain tuple (see ``NEW_JOB``).
NewJobFields = tuple[
    str, str, str, int, str, str, str | None, str | None, datetime, int, str | None,
    tuple[str, ...] | None, str | None, tuple[str, ...] | None,
]  # fmt: skip
#: An ``EnqueueRequest``'s fields in their order, as a plain tuple (see ``NEW_REQUEST``).
EnqueueRequestFields = tuple[NewJob, MergeDecider | None, tuple[str, ...], datetime | None]

#: ``NewJob`` and ``EnqueueRequest`` built as the tuples they are (``venturi._tuples``),
#: for a batch enqueue that makes one of each per job: 0.33 and 0.23 µs per object by
#: their constructors.
NEW_JOB = cast(
    "Callable[[type[NewJob], NewJobFields], NewJob]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
NEW_REQUEST = cast(
    "Callable[[type[EnqueueRequest], EnqueueRequestFields], EnqueueRequest]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
check_fields(NewJobFields, NewJob)
check_fields(EnqueueRequestFields, EnqueueRequest)
