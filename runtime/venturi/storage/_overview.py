"""What both backends make of the rows of the dashboard's statements, as pure functions.

Each backend runs its own statements (``queries.sql``) and converts the times
its rows hold; the counting rule, the scaling of a sample and the shape of the
result are the same for both, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from venturi.storage._overview_types import (
    Basis,
    CountBasis,
    DeadGroup,
    MinuteCounts,
    QueueOverview,
)

#: Up to this many jobs in the table (by the backend's estimate) the views count every
#: row; above, a sample of pages (see ``_overview_types``).
EXACT_UP_TO = 100_000

#: The last hour of throughput, one bar per minute.
THROUGHPUT_MINUTES = 60

#: Pages a sampled count reads: about 20,000 rows, enough that a state holding 1% of the
#: jobs is seen in about 200 of them (a count within some 7%), few enough that one read
#: costs tens of milliseconds (tests/benchmarks/test_dashboard_bench.py).
SAMPLE_PAGES = 500


def basis(table_rows: int, table_pages: int, exact_up_to: int) -> Basis:
    """Exact while the table holds at most ``exact_up_to`` rows, else a page sample."""
    if table_rows <= exact_up_to or table_pages <= SAMPLE_PAGES:
        return Basis(CountBasis.EXACT, 100.0, table_rows)
    return Basis(CountBasis.SAMPLED, 100.0 * SAMPLE_PAGES / table_pages, table_rows)


def scaled(count: int, how: Basis) -> int:
    return count if how.exact else round(count * 100.0 / how.sample_percent)


def queues(
    pauses: Mapping[str, tuple[datetime, str | None]],
    counts: Iterable[tuple[str, str, int, int, datetime | None]],
    how: Basis,
) -> tuple[QueueOverview, ...]:
    """Every queue with jobs in a state that may still run (pending, running, dead) or
    paused, by name, from rows of (queue, state, jobs, ready jobs, oldest ready run time)."""
    by_queue: dict[str, dict[str, Any]] = {}
    for queue, state, n, ready, oldest in counts:
        if state not in ("pending", "running", "dead"):
            continue
        entry = by_queue.setdefault(queue, {})
        if state == "pending":
            entry["pending"] = scaled(n, how)
            entry["scheduled"] = scaled(n - ready, how)
            entry["oldest_ready_at"] = oldest
        else:
            entry[state] = scaled(n, how)
    result: list[QueueOverview] = []
    for queue in sorted(by_queue.keys() | pauses.keys()):
        paused_at, reason = pauses.get(queue, (None, None))
        result.append(
            QueueOverview(queue=queue, paused_at=paused_at, pause_reason=reason, **by_queue.get(queue, {}))
        )
    return tuple(result)


def throughput_since(now: datetime) -> datetime:
    """The start of the oldest minute the throughput shows."""
    return now.replace(second=0, microsecond=0) - timedelta(minutes=THROUGHPUT_MINUTES - 1)


def throughput(
    now: datetime, rows: Iterable[tuple[datetime, int, int]], how: Basis
) -> tuple[MinuteCounts, ...]:
    """Every minute of the last hour (none left out), from rows of (minute, completed, dead)."""
    first = throughput_since(now)
    found = {minute: (completed, dead) for minute, completed, dead in rows}
    minutes: list[MinuteCounts] = []
    for i in range(THROUGHPUT_MINUTES):
        minute = first + timedelta(minutes=i)
        completed, dead = found.get(minute, (0, 0))
        minutes.append(MinuteCounts(minute, scaled(completed, how), scaled(dead, how)))
    return tuple(minutes)


def dead_groups(
    rows: Iterable[tuple[str | None, int, datetime | None, datetime | None, str]],
    messages: Mapping[str, str | None],
    how: Basis,
) -> tuple[DeadGroup, ...]:
    """Groups from rows of (error code, jobs, first finish, last finish, newest id), the
    largest first, each with the message of its newest job."""
    groups = [
        DeadGroup(code, scaled(n, how), first, last, sample, messages.get(sample))
        for code, n, first, last, sample in rows
    ]
    groups.sort(key=lambda g: (-g.count, g.error_code or ""))
    return tuple(groups)
