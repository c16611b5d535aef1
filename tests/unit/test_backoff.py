"""Fibonacci backoff: the multiplier table, the cap, and deterministic jitter."""

from __future__ import annotations

from datetime import timedelta

import pytest
from venturi import DEFAULT_BACKOFF, Backoff
from venturi._backoff import fibonacci, jitter_unit

SECOND = timedelta(seconds=1)


def test_fibonacci_numbers() -> None:
    assert [fibonacci(n) for n in range(10)] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
    with pytest.raises(ValueError):
        fibonacci(-1)


def test_delay_table_is_fib_minus_one() -> None:
    backoff = Backoff(base=SECOND, cap=timedelta(days=1))
    multipliers = [backoff.delay(n) / SECOND for n in range(1, 11)]
    assert multipliers == [0, 0, 1, 2, 4, 7, 12, 20, 33, 54]


def test_first_two_retries_are_immediate() -> None:
    assert DEFAULT_BACKOFF.delay(1) == timedelta(0)
    assert DEFAULT_BACKOFF.delay(2) == timedelta(0)
    assert DEFAULT_BACKOFF.delay(3) == timedelta(seconds=1)


def test_cap_bounds_the_delay_even_for_huge_attempts() -> None:
    backoff = Backoff(base=timedelta(seconds=2), cap=timedelta(seconds=30))
    assert backoff.delay(6) == timedelta(seconds=14)  # 2 * 7
    assert backoff.delay(7) == timedelta(seconds=24)  # 2 * 12
    assert backoff.delay(8) == timedelta(seconds=30)  # 2 * 20 = 40, capped
    assert backoff.delay(10_000) == timedelta(seconds=30)


def test_attempt_counts_failures_from_one() -> None:
    with pytest.raises(ValueError, match="starts at 1"):
        DEFAULT_BACKOFF.delay(0)


@pytest.mark.parametrize(
    ("base", "cap"), [(timedelta(0), SECOND), (-SECOND, SECOND), (SECOND * 2, SECOND)]
)
def test_invalid_parameters(base: timedelta, cap: timedelta) -> None:
    with pytest.raises(ValueError):
        Backoff(base=base, cap=cap)


def test_jitter_is_deterministic_per_job_and_attempt() -> None:
    backoff = Backoff(base=SECOND, cap=timedelta(hours=1))
    first = backoff.jittered(8, job_id="01HZZZJOBA", fraction=0.5)
    assert backoff.jittered(8, job_id="01HZZZJOBA", fraction=0.5) == first
    assert jitter_unit("01HZZZJOBA", 8) == jitter_unit("01HZZZJOBA", 8)
    # Another job (or another attempt) lands elsewhere: workers do not retry in lockstep.
    others = {backoff.jittered(8, job_id=f"01HZZZJOB{i}", fraction=0.5) for i in range(20)}
    assert len(others) > 15
    assert jitter_unit("01HZZZJOBA", 8) != jitter_unit("01HZZZJOBA", 9)


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 1.0])
def test_jitter_stays_within_bounds(fraction: float) -> None:
    backoff = Backoff(base=SECOND, cap=timedelta(hours=1))
    for attempt in range(1, 15):
        delay = backoff.delay(attempt)
        for i in range(50):
            jittered = backoff.jittered(attempt, job_id=f"job-{i}", fraction=fraction)
            assert delay * (1 - fraction) <= jittered <= delay
    assert 0.0 <= jitter_unit("x", 1) < 1.0


def test_zero_fraction_means_no_jitter() -> None:
    assert DEFAULT_BACKOFF.jittered(9, job_id="a", fraction=0.0) == DEFAULT_BACKOFF.delay(9)


@pytest.mark.parametrize("fraction", [-0.1, 1.5])
def test_jitter_fraction_is_checked(fraction: float) -> None:
    with pytest.raises(ValueError, match="jitter fraction"):
        DEFAULT_BACKOFF.jittered(3, job_id="a", fraction=fraction)
