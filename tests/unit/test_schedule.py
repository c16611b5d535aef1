"""Schedule slots: intervals, cron through cronsim, time zones and daylight saving time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from venturi._schedule import Missed, Schedule
from venturi.errors import ConfigurationError

PARIS = ZoneInfo("Europe/Paris")


def paris(year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=PARIS)


def local(slots: list[datetime]) -> list[str]:
    return [slot.astimezone(PARIS).strftime("%m-%d %H:%M%z") for slot in slots]


def test_interval_slots_are_multiples_of_the_interval_from_local_midnight() -> None:
    every = Schedule(every=timedelta(seconds=1))
    now = datetime(2026, 3, 30, 5, 0, 0, 500_000, tzinfo=UTC)
    assert every.latest(now) == datetime(2026, 3, 30, 5, 0, tzinfo=UTC)
    assert every.after(now) == datetime(2026, 3, 30, 5, 0, 1, tzinfo=UTC)
    assert every.between(now - timedelta(seconds=2), now) == [
        datetime(2026, 3, 30, 4, 59, 59, tzinfo=UTC), datetime(2026, 3, 30, 5, 0, tzinfo=UTC),
    ]  # fmt: skip
    six_hours = Schedule(every=timedelta(hours=6), timezone="Europe/Paris")
    # In winter, Paris midnight is 23:00 UTC: slots at 05:00, 11:00, 17:00, 23:00 UTC.
    assert six_hours.after(datetime(2026, 1, 10, 12, 0, tzinfo=UTC)) == datetime(2026, 1, 10, 17, 0, tzinfo=UTC)


def test_an_interval_keeps_elapsed_time_across_a_daylight_saving_change() -> None:
    """Documented: every 6h stays six real hours apart, so its local times move by an hour."""
    six_hours = Schedule(every=timedelta(hours=6), timezone="Europe/Paris")
    slots = six_hours.between(paris(2026, 3, 28, 20, 0), paris(2026, 3, 29, 20, 0))
    assert local(slots) == ["03-29 00:00+0100", "03-29 07:00+0200", "03-29 13:00+0200", "03-29 19:00+0200"]
    assert {b - a for a, b in pairwise(slots)} == {timedelta(hours=6)}


def test_cron_when_clocks_go_forward() -> None:
    """Europe/Paris, 2026-03-29: 02:00 jumps to 03:00. A fixed time in the skipped hour runs
    once, at the jump; a wildcard has no slot in the skipped hour."""
    fixed = Schedule(cron="30 2 * * *", timezone="Europe/Paris")
    assert local(fixed.between(paris(2026, 3, 27, 12, 0), paris(2026, 3, 30, 12, 0))) == [
        "03-28 02:30+0100", "03-29 03:00+0200", "03-30 02:30+0200",
    ]  # fmt: skip
    half_hours = Schedule(cron="*/30 * * * *", timezone="Europe/Paris")
    assert local(half_hours.between(paris(2026, 3, 29, 1, 0), paris(2026, 3, 29, 3, 30))) == [
        "03-29 01:30+0100", "03-29 03:00+0200", "03-29 03:30+0200",
    ]  # fmt: skip


def test_cron_when_clocks_go_back() -> None:
    """Europe/Paris, 2026-10-25: 03:00 goes back to 02:00. A fixed time in the repeated hour
    runs once (its first occurrence); a wildcard runs in both."""
    fixed = Schedule(cron="30 2 * * *", timezone="Europe/Paris")
    assert local(fixed.between(paris(2026, 10, 24, 12, 0), paris(2026, 10, 26, 12, 0))) == [
        "10-25 02:30+0200", "10-26 02:30+0100",
    ]  # fmt: skip
    half_hours = Schedule(cron="*/30 * * * *", timezone="Europe/Paris")
    start = paris(2026, 10, 25, 1, 45)
    two_hours_later = start.astimezone(UTC) + timedelta(hours=2)  # real hours, not wall clock
    assert local(half_hours.between(start, two_hours_later)) == [
        "10-25 02:00+0200", "10-25 02:30+0200", "10-25 02:00+0100", "10-25 02:30+0100",
    ]  # fmt: skip


def test_latest_is_the_last_slot_at_or_before() -> None:
    cron = Schedule(cron="0 7 * * *", timezone="Europe/Paris")
    seven = paris(2026, 3, 30, 7, 0)
    assert cron.latest(seven) == seven
    assert cron.latest(seven - timedelta(seconds=1)) == paris(2026, 3, 29, 7, 0)
    assert cron.after(seven) == paris(2026, 3, 31, 7, 0)


def test_grace_defaults_and_description() -> None:
    assert Schedule(every=timedelta(seconds=1)).on_time_within == timedelta(seconds=1)
    assert Schedule(every=timedelta(hours=1)).on_time_within == timedelta(minutes=1)
    assert Schedule(cron="0 * * * *", grace=timedelta(minutes=5)).on_time_within == timedelta(minutes=5)
    assert Schedule(cron="0 7 * * *", timezone="Europe/Paris", missed=Missed.LATEST).describe() == (
        "cron 0 7 * * * (Europe/Paris), missed: latest"
    )
    assert Schedule(every=timedelta(seconds=90)).describe() == "every 90s (UTC), missed: skip"


def test_bad_schedules_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="either cron or every"):
        Schedule()
    with pytest.raises(ConfigurationError, match="either cron or every"):
        Schedule(cron="* * * * *", every=timedelta(seconds=1))
    with pytest.raises(ConfigurationError, match="unknown time zone 'Mars/Olympus'"):
        Schedule(cron="* * * * *", timezone="Mars/Olympus")
    with pytest.raises(ConfigurationError, match="must be positive"):
        Schedule(every=timedelta(0))
    with pytest.raises(ConfigurationError, match="invalid cron expression '61 \\* \\* \\* \\*'"):
        Schedule(cron="61 * * * *").after(datetime.now(UTC))
