"""Jobs in flight and the claimer's wait for room: the one owner of the wake-up condition.

The engine counts jobs in when they are claimed and out when their run ends
(or they are skipped, or handed back at shutdown); the claimer waits here
until no more than a given number are in flight. The count, the threshold
and the event live together, so "wake the claimer once no more than N jobs
are in flight" is decided in one place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from contextlib import contextmanager


class Capacity:
    __slots__ = ("_wake", "_wake_at", "ended_total", "in_flight", "stopping")

    def __init__(self) -> None:
        #: Claimed and not yet ended (queued + running).
        self.in_flight = 0
        #: Ended since the start (the pace of the runs is measured from it).
        self.ended_total = 0
        self.stopping = False
        #: Wake the claimer once ``in_flight`` drops to this (-1: it is not waiting on runs).
        self._wake_at = -1
        self._wake = asyncio.Event()

    def claimed(self, count: int) -> None:
        self.in_flight += count

    def ended(self) -> None:
        """One job is no longer in flight: wake the claimer if it waits for that much room."""
        in_flight = self.in_flight - 1
        self.in_flight = in_flight
        self.ended_total += 1
        if in_flight <= self._wake_at:
            self._wake_at = -1
            self._wake.set()

    def stop(self) -> None:
        """No more claims: wake the claimer whatever it waits for."""
        self.stopping = True
        self._wake.set()

    @contextmanager
    def room(self, in_flight: int) -> Generator[asyncio.Event | None, None, None]:
        """Arm the wake-up for ``in_flight`` jobs in flight, for the length of the block.

        Yields the event to wait on, or None when there is no need to wait: no
        more than ``in_flight`` are in flight already, or the worker is stopping.
        """
        self._wake.clear()
        if self.stopping or self.in_flight <= in_flight:
            yield None
            return
        self._wake_at = in_flight
        try:
            yield self._wake
        finally:
            self._wake_at = -1
