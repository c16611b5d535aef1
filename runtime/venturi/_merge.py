"""Merge decisions: what an enqueue does when a pending job with the same key exists.

``Keep``, ``Replace`` and ``With`` act on the existing row (its id and journal
survive, and a ``merged`` journal entry records the decision); ``Independent``
inserts a new row instead, which keeps its dedup key. Of several pending jobs
sharing a key, ``merge`` always sees the newest (the most recently enqueued).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from venturi._priority import Priority

if TYPE_CHECKING:
    from venturi._journal import JournalEntry

T = TypeVar("T")
C = TypeVar("C")


class MergeKind(enum.StrEnum):
    KEEP = "keep"
    REPLACE = "replace"
    WITH = "with"
    INDEPENDENT = "independent"


@dataclass(frozen=True, slots=True)
class Merge(Generic[T, C]):
    """A merge decision. Build one with ``Keep``, ``Replace``, ``Independent`` or ``With(...)``.

    ``run_at``, ``delay`` and ``queue`` (``With`` only) move the surviving job; None
    leaves its own.
    """

    kind: MergeKind
    task: T | None = None
    carry: C | None = None
    run_at: datetime | None = None
    delay: timedelta | None = None
    queue: str | None = None


#: The incoming task is redundant; the existing job is left as it is: its payload, carry,
#: priority, run time and queue.
Keep: Merge[Any, Any] = Merge(MergeKind.KEEP)
#: The existing job takes the incoming enqueue whole: its payload, priority, run time
#: (``run_at`` or ``delay``, or now when it gave neither) and queue; the carry resets to its
#: default. Replacing a job due in two hours with a run-now enqueue makes it due now.
Replace: Merge[Any, Any] = Merge(MergeKind.REPLACE)
#: Not a duplicate after all: the incoming task is enqueued as a new, separate job, with its
#: own run time and queue. It keeps its dedup key and, being the newest pending job with it,
#: is the next enqueue's candidate.
Independent: Merge[Any, Any] = Merge(MergeKind.INDEPENDENT)


def With(
    task: T,
    carry: C,
    *,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
    queue: str | None = None,
) -> Merge[T, C]:
    """Replace the existing job's payload and carry with computed values, continuing its work.

    The priority of the surviving job becomes ``task.priority()``, so a merge can escalate it.
    Its run time and queue stay the existing job's unless given: ``run_at`` (a timezone-aware
    datetime) or ``delay`` (a non-negative timedelta from now), and ``queue``, checked as an
    enqueue checks them (a ``ConfigurationError`` rolls the enqueue back). The earlier of
    the two requests: ``run_at=min(existing.run_at, existing.requested_run_at)``.
    """
    return Merge(MergeKind.WITH, task, carry, run_at=run_at, delay=delay, queue=queue)


@dataclass(frozen=True, slots=True)
class Pending(Generic[T, C]):
    """The existing pending job an enqueue collided with, as ``merge`` sees it.

    ``journal`` holds the most recent ``venturi.HISTORY_WINDOW`` (20) entries of the job's
    journal, oldest first (all of them when it has no more); ``journal_count`` is how many
    it holds in all, and the whole journal is ``Queue.get(job_id).journal``.
    ``run_at`` and ``queue`` are the existing job's; ``requested_run_at`` is the run time
    the incoming enqueue asked for (its ``run_at`` or ``delay``, or now when it gave
    neither) and ``requested_queue`` its queue: what ``Replace`` would give the job.
    """

    job_id: str
    payload: T
    carry: C
    run_count: int
    priority: Priority
    journal: tuple[JournalEntry, ...]
    run_at: datetime
    queue: str
    requested_run_at: datetime
    requested_queue: str
    journal_count: int = 0
