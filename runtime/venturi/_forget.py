"""Erasure of one entity's jobs (``Queue.forget``): the reference asked for, and the result.

``AsyncQueue.forget`` (and its sync twin, which ``venturi jobs forget`` uses)
counts the jobs that refer to the entity, found through the references' index,
before anything changes; then, unless it is a dry run, it opens the erasure's
audit record and deletes those jobs in batches, each its own transaction, up to
the highest id the count saw (``storage/_erasure_types.py``). Jobs enqueued
after the count are left for the next erasure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from venturi._labels import ref_text
from venturi._storable import text_problem
from venturi.errors import ConfigurationError
from venturi.storage._types import JobState

if TYPE_CHECKING:
    from venturi.storage._admin_types import JobCount

#: The longest ``requested_by`` text stored in an audit record.
MAX_REQUESTED_BY = 200


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What an erasure did: the reference (``entity=value``), the jobs counted before
    anything changed, the jobs deleted in each state (a running job fenced, then
    deleted) and the audit record's id (None for a dry run, which changes nothing)."""

    ref: str
    matched: JobCount
    erased: dict[JobState, int] = field(default_factory=dict[JobState, int])
    erasure_id: int | None = None
    batches: int = 0

    @property
    def dry_run(self) -> bool:
        return self.erasure_id is None

    @property
    def total(self) -> int:
        """Jobs deleted."""
        return sum(self.erased.values())

    @property
    def fenced(self) -> int:
        """Running jobs among them: their workers' late results are rejected."""
        return self.erased.get(JobState.RUNNING, 0)


def forgotten_ref(ref: Any) -> str:
    """The stored reference of ``ref``, given as ``(entity, value)``: ``"user=123"``."""
    if isinstance(ref, str):
        raise ConfigurationError(
            f"ref must be a pair (entity, value), e.g. ('user', '123'), not the string {ref!r}"
        )
    pair: tuple[Any, ...] = tuple(cast("tuple[Any, ...]", ref)) if isinstance(ref, tuple | list) else ()
    if len(pair) != 2:
        raise ConfigurationError(f"ref must be a pair (entity, value), e.g. ('user', '123'); got {ref!r}")
    entity, value = pair
    return ref_text(entity, value, "the reference to forget")


def requested_by_text(requested_by: Any) -> str | None:
    """``requested_by`` as stored in the audit record: free text, or None."""
    if requested_by is None:
        return None
    if not isinstance(requested_by, str):
        raise ConfigurationError(f"requested_by must be a string, got {type(requested_by).__name__}")
    problem = text_problem(requested_by)
    if problem is not None:
        raise ConfigurationError(f"requested_by {requested_by!r} {problem}")
    if len(requested_by) > MAX_REQUESTED_BY:
        raise ConfigurationError(
            f"requested_by is {len(requested_by)} characters long; at most {MAX_REQUESTED_BY}"
        )
    return requested_by


def added(total: Mapping[JobState, int], batch: Mapping[JobState, int]) -> dict[JobState, int]:
    """Counts by state, ``batch``'s added to ``total``'s."""
    both = dict(total)
    for state, n in batch.items():
        both[state] = both.get(state, 0) + n
    return both
