"""Merge decisions: what an enqueue does when a pending job with the same key exists.

``Keep``, ``Replace`` and ``With`` act on the existing row (its id and journal
survive, and a ``merged`` journal entry records the decision); ``Independent``
inserts a new row instead, which keeps its dedup key. Of several pending jobs
sharing a key, ``merge`` always sees the newest (the most recently enqueued).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
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
    """A merge decision. Build one with ``Keep``, ``Replace``, ``Independent`` or ``With(...)``."""

    kind: MergeKind
    task: T | None = None
    carry: C | None = None


#: The incoming task is redundant; the existing job is left as it is.
Keep: Merge[Any, Any] = Merge(MergeKind.KEEP)
#: The existing payload is replaced by the incoming one; the carry resets to its default.
Replace: Merge[Any, Any] = Merge(MergeKind.REPLACE)
#: Not a duplicate after all: the incoming task is enqueued as a new, separate job. It keeps
#: its dedup key and, being the newest pending job with it, is the next enqueue's candidate.
Independent: Merge[Any, Any] = Merge(MergeKind.INDEPENDENT)


def With(task: T, carry: C) -> Merge[T, C]:
    """Replace the existing job's payload and carry with computed values, continuing its work.

    The priority of the surviving job becomes ``task.priority()``, so a merge can escalate it.
    """
    return Merge(MergeKind.WITH, task, carry)


@dataclass(frozen=True, slots=True)
class Pending(Generic[T, C]):
    """The existing pending job an enqueue collided with, as ``merge`` sees it."""

    job_id: str
    payload: T
    carry: C
    run_count: int
    priority: Priority
    journal: tuple[JournalEntry, ...]
