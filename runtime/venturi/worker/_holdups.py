"""Noticing that this worker was held up, so that it takes no lease a live peer could not renew.

A lease expires when nobody renewed it for ``lease_duration``; the reclaimer
hands such jobs to others, on the assumption that their worker vanished. But a
worker can stop for a while without vanishing: its process frozen (SIGSTOP, a
paused VM, a long GC), or, on SQLite, every write waiting for the one write lock
while another process holds it (a frozen writer stops all its peers at once), or
the database unreachable for everyone. When the hold-up ends, the leases that ran
out meanwhile mostly belong to workers that were held up by the same thing and
are about to renew them. A reclaimer that ran first would take them away, and the
work those workers had finished would be rejected by the fence and done again.

So after a hold-up — the event loop not seen running for a while, a heartbeat
that failed or took long, a reclaim pass that took long — this worker:

- does not reclaim until one ``heartbeat_interval`` has passed, time for every
  live peer to renew what it holds (a worker that really vanished renews nothing
  and loses its leases on the pass after);
- does not start the jobs it claimed ahead before a heartbeat has told it which
  of their leases it still holds (they may have expired while it was held up).

A hold-up is a stall of half the margin between the lease and the heartbeat
(``(lease_duration - heartbeat_interval) / 2``): anything shorter cannot make a
lease expire that would otherwise have been renewed in time.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable


class HoldUps:
    """When this worker was last held up, and whether its leases need confirming."""

    __slots__ = (
        "_clock", "_last_seen", "_until", "_waiting", "grace_s", "suspect", "threshold_s",
    )  # fmt: skip

    def __init__(
        self, *, threshold_s: float, grace_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold_s = threshold_s
        self.grace_s = grace_s
        self._clock = clock
        self._last_seen = clock()
        self._until = -math.inf
        self._waiting: list[float] = []  # start times of heartbeats in flight
        #: Held up since the last heartbeat that started afterwards: leases may be lost.
        self.suspect = False

    @property
    def last_held_up(self) -> float:
        """The monotonic time the last hold-up was noticed (``-inf``: never)."""
        return self._until

    def check(self) -> bool:
        """Called while the worker runs: notice a stall since the last call (or tick).
        Returns ``suspect``: whether held leases need confirming before new jobs start."""
        now = self._clock()
        if now - self._last_seen > self.threshold_s:
            self.held_up(now)
        elif self._waiting and now - self._waiting[0] > self.threshold_s:
            # A heartbeat still waiting (for a connection, a lock): held up right now.
            # Reclaiming waits; the leases are confirmed once the heartbeat is through.
            self.held_up(now, leases=False)
        self._last_seen = now
        return self.suspect

    def waiting(self) -> float:
        """A heartbeat begins; returns its start, to give to ``done_waiting``."""
        started = self._clock()
        self._waiting.append(started)
        return started

    def done_waiting(self, started: float, *, failed: bool = False) -> None:
        """The heartbeat begun at ``started`` ended: a failure or a slow one is a hold-up;
        a success begun after the last hold-up confirms the leases."""
        self._waiting.remove(started)
        if failed:
            self.held_up(leases=False)
            return
        self.took(self._clock() - started)
        self.confirmed(started)

    def took(self, seconds: float) -> None:
        """A storage call took ``seconds``: as long a wait is a hold-up too."""
        if seconds > self.threshold_s:
            self.held_up()

    def held_up(self, at: float | None = None, *, leases: bool = True) -> None:
        """Note a hold-up (now, or at ``at``). ``leases=False`` for a failed storage
        call: the reclaimer waits, but a heartbeat to confirm the leases would only
        fail the same way (the heartbeat loop goes on trying)."""
        self._until = self._clock() if at is None else at
        if leases:
            self.suspect = True

    def confirmed(self, heartbeat_started: float) -> None:
        """A heartbeat that started at ``heartbeat_started`` succeeded: if it began
        after the last hold-up, the worker now knows which leases it still holds."""
        if heartbeat_started >= self._until:
            self.suspect = False

    def reclaim_wait(self) -> float:
        """Seconds to wait before reclaiming: until peers had a heartbeat's time to renew."""
        self.check()
        return max(0.0, self._until + self.grace_s - self._clock())

    def now(self) -> float:
        return self._clock()

    async def watch(self) -> None:
        """Tick often enough that any stall longer than the threshold is noticed."""
        interval = self.threshold_s / 4
        while True:
            await asyncio.sleep(interval)
            self.check()
