"""Bulk cancel and retry: which jobs, and what an operation did.

``AsyncQueue.cancel_jobs`` (and its sync twin, which ``venturi jobs cancel``
uses) counts the selection before anything changes, then walks the selected
jobs in id order, one transaction per batch, and stops at the highest id the
count saw, so jobs enqueued meanwhile are left alone and the count is the
most it can change. A batch is all or nothing; an error stops the operation
with the batches before it committed.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from venturi._labels import TAG
from venturi.errors import ConfigurationError
from venturi.storage._types import JobState

if TYPE_CHECKING:
    from venturi.storage._admin_types import JobCount, JobSelection

#: Jobs changed per transaction unless told otherwise: big enough to be quick,
#: small enough that workers never wait long for the database.
DEFAULT_BATCH_SIZE = 1000


class BulkAction(enum.StrEnum):
    CANCEL = "cancel"
    RETRY = "retry"


#: The states each action applies to, and its default when none is given.
ACTION_STATES = {
    BulkAction.CANCEL: (JobState.PENDING, JobState.RUNNING),
    BulkAction.RETRY: (JobState.DEAD, JobState.CANCELLED),
}


@dataclass(frozen=True, slots=True)
class BulkResult:
    """What a bulk operation did: the count it started from and the jobs it changed."""

    matched: JobCount
    changed: int
    batches: int


def selection(
    action: BulkAction,
    *,
    kinds: Iterable[str] = (),
    queues: Iterable[str] = (),
    states: Iterable[JobState | str] = (),
    older_than: timedelta | None = None,
    tags: Iterable[str] = (),
    now: datetime,
) -> JobSelection:
    """The ``JobSelection`` of a bulk ``action``; a state it cannot apply to is an error."""
    allowed = ACTION_STATES[action]
    chosen: list[JobState] = []
    for state in states:
        try:
            value = JobState(state)
        except ValueError:
            raise ConfigurationError(f"unknown job state {state!r}") from None
        if value not in allowed:
            names = " or ".join(s.value for s in allowed)
            raise ConfigurationError(f"cannot {action.value} {value.value} jobs; only {names} ones")
        chosen.append(value)
    if older_than is not None and older_than < timedelta(0):
        raise ConfigurationError("older_than must not be negative")
    # Imported here: the operator's types are not loaded by ``import venturi``.
    from venturi.storage._admin_types import JobSelection

    return JobSelection(
        kinds=_names(kinds, "kinds"),
        queues=_names(queues, "queues"),
        states=tuple(dict.fromkeys(chosen)) or allowed,
        created_before=None if older_than is None else now - older_than,
        tags=TAG.checked(tags, "the tags to select by"),
    )


def queue_name(name: str) -> str:
    """A queue name as given to ``pause_queue`` or ``resume_queue``: a non-empty string."""
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"a queue name must be a non-empty string, got {name!r}")
    return name


def _names(values: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise ConfigurationError(f"{what} must be a sequence of names, not the string {values!r}")
    names = tuple(dict.fromkeys(values))
    if any(not isinstance(name, str) or not name for name in names):
        raise ConfigurationError(f"{what} must be non-empty strings")
    return names


def check_batch_size(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigurationError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    return batch_size


#: Told the count before anything changes (the command line prints it).
Counted = Callable[["JobCount"], None]  # quoted: JobCount is imported for type checking only
#: Told the running total after each committed batch.
Progress = Callable[[int], None]
