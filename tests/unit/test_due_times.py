"""DueTimes: the claimer's sleep is the poll interval or just past the earliest known due time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from venturi.worker._due import MOST_KEPT, SLACK_S, DueTimes

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_sleeps_the_poll_interval_without_a_due_time() -> None:
    assert DueTimes().sleep_for(5.0, T0) == 5.0


def test_sleeps_until_just_after_the_earliest_due_time() -> None:
    due = DueTimes()
    due.note(T0 + timedelta(seconds=3))
    due.note(T0 + timedelta(milliseconds=100))
    assert due.sleep_for(5.0, T0) == 0.1 + SLACK_S
    assert due.sleep_for(0.05, T0) == 0.05  # never longer than the poll interval


def test_a_claim_consumes_the_times_it_saw_and_keeps_the_later_ones() -> None:
    due = DueTimes()
    for ms in (100, 300, 200):
        due.note(T0 + timedelta(milliseconds=ms))
    due.claimed(T0 + timedelta(milliseconds=200))
    assert due.earliest == T0 + timedelta(milliseconds=300)
    due.claimed(T0 + timedelta(seconds=1))
    assert due.earliest is None


def test_a_time_already_past_wakes_at_once() -> None:
    due = DueTimes()
    due.note(T0 - timedelta(seconds=1))
    assert due.sleep_for(5.0, T0) == SLACK_S


def test_memory_is_bounded_keeping_the_earliest() -> None:
    due = DueTimes()
    for n in range(MOST_KEPT * 3, 0, -1):
        due.note(T0 + timedelta(seconds=n))
    assert len(due._heap) <= MOST_KEPT  # pyright: ignore[reportPrivateUsage]
    assert due.earliest == T0 + timedelta(seconds=1)
