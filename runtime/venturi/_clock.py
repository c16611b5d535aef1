"""The runtime's one clock: aware UTC ``datetime`` values, as storage expects them."""

from __future__ import annotations

from datetime import UTC, datetime

#: The latest run time (and retention horizon) venturi stores. Python's datetimes end
#: with 9999, and SQLite keeps times as float seconds, which round the last moments of
#: that year past it; a year short of the end, every backend reads back what it stored.
LATEST_RUN_AT = datetime(9999, 1, 1, tzinfo=UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


def capped(moment: datetime) -> datetime:
    """``moment``, or ``LATEST_RUN_AT`` if it is later."""
    return moment if moment <= LATEST_RUN_AT else LATEST_RUN_AT
