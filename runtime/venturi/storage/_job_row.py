"""A ``jobs`` row as a ``StoredJob``, read the same way by every backend.

Both backends select a job's columns in one order (``JOB_COLUMNS`` of their
``_rows``); only the time columns are stored differently (timestamptz on
PostgreSQL, epoch microseconds on SQLite), so each passes its converter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from venturi._journal import JournalEntry
from venturi.storage._types import JobState, StoredJob


def stored_job(
    row: Sequence[Any], journal: Sequence[JournalEntry], time: Callable[[Any], datetime]
) -> StoredJob:
    """``row`` in ``JOB_COLUMNS`` order; columns after the 17th are ignored."""
    (
        job_id, kind, queue, priority, state, payload, carry, dedup_key, concurrency_key,
        run_at, created_at, run_count, failure_count, output, error_code, error_message,
        finished_at,
    ) = row[:17]  # fmt: skip
    return StoredJob(
        id=job_id,
        kind=kind,
        queue=queue,
        priority=priority,
        state=JobState(state),
        payload=payload,
        carry=carry,
        dedup_key=dedup_key,
        concurrency_key=concurrency_key,
        run_at=time(run_at),
        created_at=time(created_at),
        run_count=run_count,
        failure_count=failure_count,
        output=output,
        error_code=error_code,
        error_message=error_message,
        finished_at=None if finished_at is None else time(finished_at),
        journal=tuple(journal),
    )
