"""Schedules: when a periodic task's jobs are due (its *slots*), computed, never stored ahead.

A task declares at most one ``Schedule``: a cron expression (five fields,
read by ``cronsim``, in the schedule's time zone) or an interval
(``every``, elapsed time counted from midnight of 2000-01-01 in that zone).
Workers that register the task enqueue one job per slot; ``worker/_scheduler``
does that, and storage's uniqueness on (schedule, slot) makes it exactly once
however many workers race for a slot.

Daylight saving time, for cron (Debian cron's rules, which cronsim follows):
when clocks go forward, a fixed time in the skipped hour (``30 2 * * *`` in
Europe/Paris on the last Sunday of March) runs once, at the moment the clocks
jump (03:00 local); a wildcard field (``*/30 * * * *``) has no slot in the
skipped hour. When clocks go back, a fixed time in the repeated hour runs
once, at its first occurrence; a wildcard field runs in both. An interval
measures elapsed time and ignores the change: ``every: 6h`` keeps six hours
between slots, so its local times move by an hour across a change.

This module is on the producer side, imported with every generated task
module, so it must not import ``cronsim``: that happens on first use, in a
worker (``pip install 'venturi[cron]'``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from venturi.errors import ConfigurationError

#: The slot of an interval schedule nearest to this instant (local midnight) is a multiple of it.
INTERVAL_ORIGIN = datetime(2000, 1, 1)
#: The grace of a cron schedule: a slot enqueued this late still counts as on time.
CRON_GRACE = timedelta(minutes=1)


class Missed(enum.StrEnum):
    """What becomes of slots that came and went while no worker ran the schedule."""

    SKIP = "skip"  # nothing: the next slot runs as usual
    LATEST = "latest"  # the most recent missed slot runs once, as soon as a worker is back


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a task runs on its own: ``cron`` or ``every``, in ``timezone``.

    ``payload`` is the JSON of the task to enqueue (fields left out take their
    defaults). ``grace`` is how late a slot may be enqueued and still count as
    on time (a worker busy or restarting): by default a minute for cron, and
    the interval itself, up to a minute, for ``every``. A slot later than that
    is missed, and ``missed`` decides.
    """

    cron: str | None = None
    every: timedelta | None = None
    timezone: str = "UTC"
    missed: Missed = Missed.SKIP
    payload: Mapping[str, Any] = field(default_factory=dict[str, Any])
    grace: timedelta | None = None

    def __post_init__(self) -> None:
        if (self.cron is None) == (self.every is None):
            raise ConfigurationError("a schedule has either cron or every, not both or neither")
        if self.every is not None and self.every <= timedelta(0):
            raise ConfigurationError(f"a schedule's every must be positive, got {self.every}")
        if self.grace is not None and self.grace < timedelta(0):
            raise ConfigurationError(f"a schedule's grace must not be negative, got {self.grace}")
        object.__setattr__(self, "missed", Missed(self.missed))
        self.zone  # a bad time zone is an error now  # noqa: B018

    @property
    def zone(self) -> tzinfo:
        if self.timezone == "UTC":
            return UTC
        # Imported here, for a schedule with a time zone: ``import venturi`` does not load
        # zoneinfo (about 1.5 ms with sysconfig), and every task class imports this module.
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigurationError(
                f"unknown time zone {self.timezone!r} in a schedule; use an IANA name "
                "such as 'Europe/Paris' (install tzdata where the system has none)"
            ) from None

    @property
    def on_time_within(self) -> timedelta:
        if self.grace is not None:
            return self.grace
        if self.every is not None:
            return min(self.every, CRON_GRACE)
        return CRON_GRACE

    def describe(self) -> str:
        """``cron 0 7 * * * (Europe/Paris), missed: skip`` or ``every 0:00:01 (UTC), ...``."""
        what = f"cron {self.cron}" if self.cron is not None else f"every {_duration(self.every)}"
        return f"{what} ({self.timezone}), missed: {self.missed.value}"

    def to_json(self) -> dict[str, Any]:
        """What ``venturi stats`` shows of the schedule (stored with its state)."""
        data: dict[str, Any] = {"timezone": self.timezone, "missed": self.missed.value}
        if self.cron is not None:
            data["cron"] = self.cron
        else:
            assert self.every is not None
            data["every_seconds"] = self.every.total_seconds()
        return data

    # -- slots -------------------------------------------------------------------------

    def after(self, moment: datetime) -> datetime:
        """The first slot strictly after ``moment`` (aware), in UTC."""
        return next(self._forward(moment))

    def between(self, start: datetime, end: datetime) -> list[datetime]:
        """The slots in (``start``, ``end``], oldest first, in UTC."""
        found: list[datetime] = []
        for slot in self._forward(start):
            if slot > end:
                break
            found.append(slot)
        return found

    def latest(self, moment: datetime) -> datetime:
        """The last slot at or before ``moment``, in UTC."""
        if self.every is not None:
            origin, step = self._interval()
            count = math.floor((moment - origin) / step)
            return (origin + count * step).astimezone(UTC)
        local = moment.astimezone(self.zone)
        # cronsim iterating backwards from a moment yields slots before it; a slot
        # at the moment itself is found by starting a microsecond later.
        return next(iter(_cron(self.cron, local + timedelta(microseconds=1), reverse=True))).astimezone(UTC)

    def _forward(self, moment: datetime) -> Iterator[datetime]:
        if self.every is not None:
            origin, step = self._interval()
            count = math.floor((moment - origin) / step) + 1
            while True:
                yield (origin + count * step).astimezone(UTC)
                count += 1
        for slot in _cron(self.cron, moment.astimezone(self.zone)):
            yield slot.astimezone(UTC)

    def _interval(self) -> tuple[datetime, timedelta]:
        assert self.every is not None
        return INTERVAL_ORIGIN.replace(tzinfo=self.zone).astimezone(UTC), self.every


def _cron(expression: str | None, start: datetime, *, reverse: bool = False) -> Iterator[datetime]:
    assert expression is not None
    try:
        from cronsim import CronSim, CronSimError
    except ImportError:
        raise ConfigurationError(
            "cron schedules need the cronsim package: pip install 'venturi[cron]'"
        ) from None
    try:
        return iter(CronSim(expression, start, reverse=reverse))
    except CronSimError as exc:
        raise ConfigurationError(f"invalid cron expression {expression!r}: {exc}") from None


def _duration(value: timedelta | None) -> str:
    assert value is not None
    seconds = value.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
