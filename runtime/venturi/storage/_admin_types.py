"""The data of the operator's calls that crosses the storage boundary.

Listing and selecting jobs, bulk operations, queue and kind stats,
schedules as shown, the backlog check and a backend's capabilities: the
operator's side of ``_types`` (see there), imported where these calls are
made, not by ``import venturi``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from venturi.storage._types import JobState


@dataclass(frozen=True, slots=True)
class JobFilter:
    kinds: tuple[str, ...] = ()
    states: tuple[JobState, ...] = ()
    queues: tuple[str, ...] = ()
    limit: int = 100
    before_id: str | None = None  # page backwards by id (newest first)
    tags: tuple[str, ...] = ()  # every one of them; checked, each once (venturi._labels)
    dedup_key: str | None = None
    error_code: str | None = None
    id_prefix: str | None = None  # ids starting with it
    created_before: datetime | None = None
    created_after: datetime | None = None  # at or after


@dataclass(frozen=True, slots=True)
class JobSelection:
    """The jobs a bulk operation (``Queue.cancel_jobs``, ``Queue.retry_jobs``) acts on.

    Empty tuples and None mean any; every given criterion must hold. ``created_before``
    selects jobs enqueued before that time (``--older-than`` on the command line);
    ``tags``, jobs carrying every one of them; the others are the dashboard's filters
    (``JobFilter``'s, so that a bulk action acts on what the filtered list shows).
    """

    kinds: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()
    states: tuple[JobState, ...] = ()
    created_before: datetime | None = None
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None  # at or after
    dedup_key: str | None = None
    error_code: str | None = None
    id_prefix: str | None = None  # ids starting with it


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


class RateLimitUse(NamedTuple):
    """How full one rate limit key is (``venturi stats``): ``taken`` of its ``max`` slots
    were taken within the last ``per_s`` seconds. ``key`` is the value of a keyed
    limit (None: the task's one limit); ``name`` the task's kind."""

    name: str
    key: str | None
    max: int
    per_s: float
    taken: int


def rate_limit_use(limit_key: str, max_runs: int, per_s: float, taken: int) -> RateLimitUse:
    """A row of a backend's ``rate_limit_use`` query, its limit key split into name and key."""
    name, separator, key = limit_key.partition("\x1f")
    return RateLimitUse(name, key if separator else None, int(max_runs), float(per_s), int(taken))


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
    output: str | None = None  # a finished job's (``venturi keys reencrypt``)


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
    #: The texts that were read, for a rewrite at the same version (``venturi keys
    #: reencrypt``): written only while the job still holds them, so that a merge or a run
    #: since is never overwritten. None: the version alone fences (``--upgrade``).
    payload_was: str | None = None
    carry_was: str | None = None
    #: A finished job's output, written only while the job still holds ``output_was``.
    output: str | None = None
    output_was: str | None = None


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do, so the runtime never silently emulates a missing feature."""

    name: str
    multi_host: bool  # workers on several machines
    listen_notify: bool  # idle workers are woken at once on enqueue
    transactional_enqueue: bool  # enqueue(task, conn=...) joins the application's transaction
    skip_locked: bool
    #: The schema version this code's migrations build, and so the one its statements
    #: need: a worker that does not migrate refuses to start on an older schema.
    schema_version: int = 0


#: How far a job's id (a ULID of the producer's clock) may be from its ``created_at`` (the
#: database's clock on PostgreSQL): the margin of the id bounds a creation time gives.
CLOCK_SLACK = timedelta(hours=1)


def id_range(
    prefix: str | None, created_after: datetime | None, created_before: datetime | None
) -> tuple[str | None, str | None]:
    """The ids [low, high) that can match an id prefix and a creation window.

    Ids are ULIDs of their enqueue time, so a creation window bounds them too: with
    that bound an index walk by id starts and stops near the window instead of
    crossing every newer (or older) job. The bound is widened by ``CLOCK_SLACK``; the
    exact ``created_at`` condition still decides.
    """
    low, high = prefix_range(prefix)
    if created_after is not None:
        floor = _ulid_floor(created_after - CLOCK_SLACK)
        low = floor if low is None else max(low, floor)
    if created_before is not None:
        ceiling = _ulid_floor(created_before + CLOCK_SLACK)
        high = ceiling if high is None else min(high, ceiling)
    return low, high


def _ulid_floor(moment: datetime) -> str:
    """The smallest ULID of ``moment``'s millisecond."""
    from venturi._ids import encode_ulid

    ms = max(0, min(int(moment.timestamp() * 1000), (1 << 48) - 1))
    return encode_ulid(ms << 80)


def prefix_range(prefix: str | None) -> tuple[str | None, str | None]:
    """The ids starting with ``prefix`` as a range [low, high) an index can serve (ids are
    compared bytewise: "C" collation on PostgreSQL, BINARY on SQLite)."""
    if not prefix:
        return None, None
    last = ord(prefix[-1])
    if last >= 0x10FFFF:
        return prefix, None
    following = 0xE000 if 0xD7FF <= last < 0xE000 else last + 1  # no surrogate in between
    return prefix, prefix[:-1] + chr(following)
