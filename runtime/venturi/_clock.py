"""The runtime's one clock: aware UTC ``datetime`` values, as storage expects them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

#: The latest run time (and retention horizon) venturi stores. Python's datetimes end
#: with 9999, and SQLite keeps times as float seconds, which round the last moments of
#: that year past it; a year short of the end, every backend reads back what it stored.
LATEST_RUN_AT = datetime(9999, 1, 1, tzinfo=UTC)


def _system_now() -> datetime:
    return datetime.now(UTC)


#: Where ``utcnow`` reads the time: the system clock, or a test's (``use_clock``).
_source: Callable[[], datetime] = _system_now


def utcnow() -> datetime:
    return _source()


def use_clock(source: Callable[[], datetime] | None) -> Callable[[], datetime]:
    """Make ``utcnow`` read ``source`` (None: the system clock) for the whole process;
    returns the source it replaces. For ``venturi.testing.run_until_complete``: a worker
    and its producers then live on a clock the test controls."""
    global _source
    previous = _source
    _source = _system_now if source is None else source
    return previous


def later(moment: datetime, delta: timedelta) -> datetime:
    """``moment + delta``, or ``LATEST_RUN_AT`` if that is later (no OverflowError): a pause,
    retry or retention that long means "not before the end of stored time"."""
    return moment + delta if delta < LATEST_RUN_AT - moment else LATEST_RUN_AT
