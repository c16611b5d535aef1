"""The adaptive lease-ahead: large for short jobs, next to nothing for long ones."""

from __future__ import annotations

import pytest
from venturi.worker._pace import HORIZON_S, MOST_AHEAD, MOST_PER_CLAIM, Pace


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_before_any_run_ends_it_holds_the_floor() -> None:
    pace = Pace(10, clock=Clock())
    assert pace.ahead == 10
    assert Pace(0, clock=Clock()).ahead == 1  # never nothing: a claim must be possible


def test_short_jobs_are_claimed_up_to_the_cap() -> None:
    clock = Clock()
    pace = Pace(10, clock=clock)
    clock.now += 0.010
    pace.observe(1_000)  # 100,000 runs per second
    assert pace.rate == pytest.approx(100_000)
    assert pace.ahead == MOST_AHEAD


def test_the_lease_ahead_is_what_the_horizon_takes_at_this_pace() -> None:
    clock = Clock()
    pace = Pace(10, clock=clock)
    clock.now += 0.1
    pace.observe(1_000)  # 10,000 per second
    assert pace.ahead == round(10_000 * HORIZON_S)


def test_long_jobs_are_not_hoarded() -> None:
    clock = Clock()
    pace = Pace(10, clock=clock)
    for ended in range(1, 20):
        clock.now += 0.1
        pace.observe(ended)  # ten runs a second: jobs of a second on ten slots
    assert pace.rate < 11
    assert pace.ahead == 10


def test_the_pace_is_a_moving_average_over_windows_of_a_few_milliseconds() -> None:
    clock = Clock()
    pace = Pace(1, clock=clock)
    clock.now += 0.001
    pace.observe(500)  # too short a window: not measured yet
    assert pace.rate == 0
    clock.now += 0.009
    pace.observe(1_000)  # 1,000 in 10 ms
    clock.now += 0.010
    pace.observe(1_000)  # nothing more in the next 10 ms
    assert pace.rate == pytest.approx(50_000)  # halfway


def test_a_claim_brings_at_most_half_of_what_is_held_ahead() -> None:
    # With claims as large as all that is held ahead, the next claim could begin only
    # once half of the last one had run, and a claim of a thousand jobs takes longer
    # than running them: the consumers sat idle for most of every claim.
    from venturi.worker import WorkerConfig

    config = WorkerConfig(concurrency=100)
    assert MOST_PER_CLAIM * 2 == MOST_AHEAD
    assert config.effective_claim_batch == 100 + MOST_PER_CLAIM
    assert config.in_flight_limit == 100 + MOST_AHEAD
    assert config.effective_flush_batch == MOST_PER_CLAIM
