"""Retry backoff: a growth curve (Fibonacci by default) with deterministic proportional jitter.

The delay before retry ``n`` (``n`` = number of failed runs so far, from 1) is
``min(base * multiplier(n), cap)``, the multiplier given by the growth:

- ``fibonacci`` (the default): ``fib(n) - 1``, so 0, 0, 1, 2, 4, 7, 12, ...: the
  first two retries are immediate, then the curve climbs;
- ``exponential``: ``2 ** (n - 1)``, so 1, 2, 4, 8, 16, ...;
- ``linear``: ``n``, so 1, 2, 3, 4, ...

Jitter then moves the delay into
``[delay * (1 - f), delay]``. The offset comes from a hash of the job's id and
the attempt number, not from a random generator, so a schedule can be
reproduced exactly from the journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

#: Past this many failures the growing curves are beyond any cap (fib(90) ~ 2.9e18,
#: 2 ** 89 ~ 6.2e26); counting further only costs time. Linear needs no bound.
_MAX_ATTEMPT = 90


class Growth(StrEnum):
    """How the retry delay grows with the failure count (see the module's docstring)."""

    FIBONACCI = "fibonacci"
    EXPONENTIAL = "exponential"
    LINEAR = "linear"

    def multiplier(self, attempt: int) -> int:
        """The multiple of ``base`` before the retry that follows failed run ``attempt``."""
        if self is Growth.LINEAR:
            return attempt
        n = min(attempt, _MAX_ATTEMPT)
        if self is Growth.FIBONACCI:
            return fibonacci(n) - 1
        power: int = 2 ** (n - 1)
        return power


def fibonacci(n: int) -> int:
    """fib(1) = 1, fib(2) = 1, fib(3) = 2, ... (fib(0) = 0)."""
    if n < 0:
        raise ValueError("n must be >= 0")
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def jitter_unit(job_id: str, attempt: int) -> float:
    """A number in [0, 1) derived from the job id and attempt, stable across machines."""
    import hashlib  # here: a producer never computes a delay, and loading OpenSSL costs ~2 ms

    digest = hashlib.blake2b(f"{job_id}:{attempt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True, slots=True)
class Backoff:
    """Backoff parameters: ``base`` multiplies the ``growth``'s multiplier, ``cap`` bounds the result."""

    base: timedelta
    cap: timedelta
    growth: Growth = Growth.FIBONACCI

    def __post_init__(self) -> None:
        if self.base <= timedelta(0):
            raise ValueError("backoff base must be positive")
        if self.cap < self.base:
            raise ValueError("backoff cap must be >= base")
        if not isinstance(self.growth, Growth):
            raise ValueError(f"backoff growth must be a venturi.Growth, got {self.growth!r}")

    def delay(self, attempt: int) -> timedelta:
        """Un-jittered delay before the retry that follows failed run number ``attempt``."""
        if attempt < 1:
            raise ValueError("attempt counts failed runs and starts at 1")
        cap_multiplier = self.cap / self.base
        multiplier = self.growth.multiplier(attempt)
        if multiplier >= cap_multiplier:
            return self.cap
        return self.base * multiplier

    def jittered(self, attempt: int, *, job_id: str, fraction: float) -> timedelta:
        """Delay with proportional jitter in ``[delay * (1 - fraction), delay]``."""
        if not 0.0 <= fraction <= 1.0:
            raise ValueError("jitter fraction must be within [0, 1]")
        delay = self.delay(attempt)
        return delay * (1.0 - fraction * jitter_unit(job_id, attempt))


DEFAULT_BACKOFF = Backoff(base=timedelta(seconds=1), cap=timedelta(hours=1))
