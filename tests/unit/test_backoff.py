"""Fibonacci backoff: the multiplier table, the cap, and deterministic jitter."""

from __future__ import annotations

from datetime import timedelta

import pytest
from venturi import DEFAULT_BACKOFF, Backoff, Growth
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


# -- growth curves --------------------------------------------------------------


def _seconds(backoff: Backoff, attempts: range) -> list[float]:
    return [backoff.delay(n) / SECOND for n in attempts]


def test_fibonacci_is_the_default_growth() -> None:
    assert Backoff(base=SECOND, cap=SECOND * 10).growth is Growth.FIBONACCI
    assert DEFAULT_BACKOFF.growth is Growth.FIBONACCI


def test_exponential_delays_double_from_the_base() -> None:
    backoff = Backoff(base=SECOND * 2, cap=timedelta(days=1), growth=Growth.EXPONENTIAL)
    assert _seconds(backoff, range(1, 9)) == [2, 4, 8, 16, 32, 64, 128, 256]


def test_linear_delays_add_the_base() -> None:
    backoff = Backoff(base=SECOND * 5, cap=timedelta(days=1), growth=Growth.LINEAR)
    assert _seconds(backoff, range(1, 7)) == [5, 10, 15, 20, 25, 30]


@pytest.mark.parametrize(
    ("growth", "expected"),
    [
        (Growth.FIBONACCI, [0, 0, 1, 2, 4, 7, 12, 20, 20, 20]),
        (Growth.EXPONENTIAL, [1, 2, 4, 8, 16, 20, 20, 20, 20, 20]),
        (Growth.LINEAR, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ],
)
def test_each_growth_stops_at_the_cap(growth: Growth, expected: list[float]) -> None:
    backoff = Backoff(base=SECOND, cap=SECOND * 20, growth=growth)
    assert _seconds(backoff, range(1, 11)) == expected
    assert backoff.delay(10_000) == SECOND * 20


def test_linear_counts_past_the_curves_bound() -> None:
    # Fibonacci and exponential stop counting at 90 failures (far past any cap); linear must not.
    backoff = Backoff(base=SECOND, cap=timedelta(hours=1), growth=Growth.LINEAR)
    assert backoff.delay(1000) == SECOND * 1000
    assert backoff.delay(3600) == timedelta(hours=1)
    assert backoff.delay(3601) == timedelta(hours=1)


@pytest.mark.parametrize("growth", list(Growth))
def test_jitter_of_each_growth_is_deterministic_and_bounded(growth: Growth) -> None:
    backoff = Backoff(base=SECOND, cap=timedelta(hours=1), growth=growth)
    for attempt in range(1, 20):
        delay = backoff.delay(attempt)
        for i in range(20):
            jittered = backoff.jittered(attempt, job_id=f"job-{i}", fraction=0.3)
            assert jittered == backoff.jittered(attempt, job_id=f"job-{i}", fraction=0.3)
            assert delay * 0.7 <= jittered <= delay
    # The offset depends on the job and the attempt only, not on the curve.
    fib = Backoff(base=SECOND, cap=timedelta(hours=1))
    ratio = backoff.jittered(5, job_id="x", fraction=0.3) / backoff.delay(5)
    assert ratio == pytest.approx(fib.jittered(5, job_id="x", fraction=0.3) / fib.delay(5))


def test_growth_must_be_a_growth() -> None:
    with pytest.raises(ValueError, match=r"venturi\.Growth"):
        Backoff(base=SECOND, cap=SECOND, growth="exponential")  # type: ignore[arg-type]
