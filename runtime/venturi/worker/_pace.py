"""How many jobs a worker leases ahead of its free slots, when ``claim_batch`` is left adaptive.

A fixed batch is a compromise: each claim and each batch of results has a fixed cost (a
statement, a round trip, a commit), which a large batch shares, but a worker that leases
hundreds of jobs ahead of its slots hoards them from its peers when jobs are long. So the
worker leases ahead what its consumers are expected to finish within ``HORIZON`` at the
pace they have been finishing: for no-op jobs that is the cap (claims of up to a thousand
jobs, sharing the fixed cost), for jobs of a second it is next to nothing (claims of a few
jobs, as slots free up). At start, before any run has ended, it leases ``floor`` ahead.

A claim takes at most half of the cap (``MOST_PER_CLAIM``): with claims as large as all
that is held ahead, the next claim could begin only once the consumers had run half of
it, and a claim of a thousand jobs takes longer than running them, so the consumers sat
idle for most of every claim (a drain's timeline: claims of 17-20 ms, the consumers busy
6 ms of each cycle). With twice as much held ahead as one claim brings, the next claim
is under way while the last one's jobs run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

#: How far ahead, in time, the worker leases work.
HORIZON_S: Final = 0.05
#: At most this many jobs ahead of the slots.
MOST_AHEAD: Final = 2000
#: At most this many jobs per claim beyond the slots, and per batch of results: half of
#: what may be held ahead, so that the next claim can begin while the last one's jobs run.
MOST_PER_CLAIM: Final = 1000
#: The pace is re-measured over windows of at least this long.
WINDOW_S: Final = 0.005


class Pace:
    """Runs ended per second (a moving average), and the lease-ahead it calls for."""

    __slots__ = ("_clock", "_ended", "_floor", "_rate", "_since")

    def __init__(self, floor: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._floor = max(1, floor)
        self._clock = clock
        self._rate = 0.0
        self._ended = 0
        self._since = clock()

    def observe(self, ended_total: int) -> None:
        """``ended_total``: runs ended so far (a counter that only grows)."""
        now = self._clock()
        elapsed = now - self._since
        if elapsed < WINDOW_S:
            return
        rate = (ended_total - self._ended) / elapsed
        self._rate = rate if self._rate == 0.0 else 0.5 * self._rate + 0.5 * rate
        self._ended, self._since = ended_total, now

    @property
    def rate(self) -> float:
        return self._rate

    @property
    def ahead(self) -> int:
        """Jobs to hold beyond the slots: what ``HORIZON_S`` of runs at this pace takes."""
        return min(MOST_AHEAD, max(self._floor, round(self._rate * HORIZON_S)))
