"""When the next job this worker could claim becomes due, as far as the worker knows.

Polling finds every job eventually, but a job paused for 100 ms would wait a
whole ``poll_interval`` (a second by default) to be found. The worker knows
many due times without asking: each pause and retry it wrote says when its job
is due again, each slot its scheduler enqueued is due at once, and on PostgreSQL
a producer's delayed enqueue announces its due time in its notification. The
claimer sleeps until the earliest of them (a few milliseconds after it) rather
than a poll interval when that is sooner. Polling still covers what the worker
cannot know (a peer's pause, a producer on SQLite in another process).

The times are kept in a heap and dropped once a claim ran at or after them
(the claim saw whatever was due); at most ``MOST_KEPT`` are kept, the earliest,
so that a flood of retries far in the future costs bounded memory.
"""

from __future__ import annotations

import asyncio
import heapq
from datetime import datetime
from typing import Final

#: Wake this long after a due time: a claim at the due time itself would compare equal
#: on one clock and be a hair early on another (SQLite stores float seconds).
SLACK_S: Final = 0.002
#: Due times kept at most (the earliest): beyond, polling finds the jobs.
MOST_KEPT: Final = 10_000


class DueTimes:
    """The due times the worker knows of, earliest first, and a wake-up for earlier ones."""

    __slots__ = ("_earlier", "_heap")

    def __init__(self) -> None:
        self._heap: list[datetime] = []
        #: Set when a time earlier than every one kept arrives: a sleeping claimer re-arms.
        self._earlier = asyncio.Event()

    def note(self, when: datetime) -> None:
        """A job this worker could claim is due at ``when`` (aware UTC)."""
        heap = self._heap
        if not heap or when < heap[0]:
            self._earlier.set()
        heapq.heappush(heap, when)
        if len(heap) > MOST_KEPT:
            self._heap = heapq.nsmallest(MOST_KEPT // 2, heap)  # sorted, so still a heap

    @property
    def earliest(self) -> datetime | None:
        return self._heap[0] if self._heap else None

    def claimed(self, at: datetime) -> None:
        """A claim ran at ``at``: every time up to it has been looked at."""
        heap = self._heap
        while heap and heap[0] <= at:
            heapq.heappop(heap)

    def sleep_for(self, poll: float, now: datetime) -> float:
        """How long an idle claimer sleeps: ``poll``, or until just after the earliest due time."""
        self._earlier.clear()
        heap = self._heap
        if not heap:
            return poll
        return min(poll, max(0.0, (heap[0] - now).total_seconds()) + SLACK_S)

    async def wait_earlier(self) -> None:
        """Until a due time earlier than every one kept (at ``sleep_for``) arrives."""
        await self._earlier.wait()
