"""Erasure (``Queue.forget``): what crosses the storage boundary, and the audit record.

An erasure deletes every job that refers to one entity (``entity=value``,
``venturi._labels``), in bounded batches, each its own transaction. Before the
first batch the storage opens the erasure's audit record (who asked, when, the
reference); each batch adds what it deleted, by state, to that record in its
own transaction, so an erasure cut short still says what it removed. The
record never holds the erased data. A running job is deleted like any other:
the row gone is its fence, so its worker's result, heartbeat or retry finds
nothing with its lease token and is rejected (the same fence as ``cancel``'s
cleared token), and nothing is left to delete when the run ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from venturi.storage._types import JobState

#: The audit record's count columns, in their order in both backends' ``erasures``.
ERASED_STATES = (
    JobState.PENDING,
    JobState.RUNNING,
    JobState.COMPLETED,
    JobState.DEAD,
    JobState.CANCELLED,
)


def by_state(rows: Iterable[tuple[Any, ...]]) -> dict[JobState, int]:
    """(state, jobs) rows as counts by state, leaving out states with none."""
    counts: dict[JobState, int] = {}
    for state, n in rows:
        if n:
            counts[JobState(state)] = counts.get(JobState(state), 0) + int(n)
    return counts


def state_columns(counts: Mapping[JobState, int]) -> tuple[int, ...]:
    """Counts by state as the audit record's columns (``ERASED_STATES``' order)."""
    return tuple(counts.get(state, 0) for state in ERASED_STATES)


class ForgetBatch(NamedTuple):
    """One committed batch of an erasure."""

    erased: dict[JobState, int]  # jobs deleted, by the state they were in
    last_id: str | None  # the highest id the batch looked at; None: nothing was left


@dataclass(frozen=True, slots=True)
class Erasure:
    """One erasure's audit record: who asked (free text, None if not said), when, the
    reference (``entity=value``), and the jobs deleted in each state."""

    id: int
    at: datetime
    requested_by: str | None
    ref: str
    erased: dict[JobState, int] = field(default_factory=dict[JobState, int])

    @property
    def total(self) -> int:
        return sum(self.erased.values())


def erasure(row: tuple[Any, ...], at: datetime) -> Erasure:
    """A row of ``list_erasures`` (id, at, requested_by, ref, then ``ERASED_STATES``'
    counts), its time already read by the backend."""
    counts = {state: int(n) for state, n in zip(ERASED_STATES, row[4:9], strict=True) if n}
    return Erasure(int(row[0]), at, row[2], row[3], counts)
