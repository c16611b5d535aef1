"""What both backends make of the rows their queue-control and bulk-selection statements
return: one rule for every backend, as pure functions.

The statements are each backend's own (``queries.sql``), and so is the way a
time comes back (epoch seconds on SQLite, ``timestamptz`` on PostgreSQL): a
backend converts a row's times and hands the rows here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from venturi.storage._admin_types import JobCount, QueueStats
from venturi.storage._types import JobState


def queue_stats(
    pauses: Mapping[str, tuple[datetime, str | None]],
    pending: Mapping[str, tuple[int, int, datetime | None]],
    running: Mapping[str, int],
) -> list[QueueStats]:
    """Every queue that has pending or running jobs, or is paused, by name: from its pause
    (since, reason), its pending jobs (count, ready, oldest ready run time) and its running
    jobs, each by queue."""
    stats: list[QueueStats] = []
    for queue in sorted(pauses.keys() | pending.keys() | running.keys()):
        paused_at, reason = pauses.get(queue, (None, None))
        count, ready, oldest = pending.get(queue, (0, 0, None))
        stats.append(
            QueueStats(
                queue=queue,
                paused_at=paused_at,
                pause_reason=reason,
                pending=count,
                ready=ready,
                running=running.get(queue, 0),
                oldest_ready_at=oldest,
            )
        )
    return stats


def job_count(rows: Iterable[tuple[Any, ...]]) -> JobCount:
    """The rows of ``count_selected`` (state, jobs, greatest id) as a ``JobCount``."""
    by_state: dict[JobState, int] = {}
    last_id: str | None = None
    for state, n, top in rows:
        by_state[JobState(state)] = n
        last_id = top if last_id is None or top > last_id else last_id
    return JobCount(by_state, last_id)
