"""The delays a task's retries wait, as ``venturi-gen docs`` shows them.

The runtime computes each delay when a run fails (``venturi._backoff``):
``min(base * multiplier(n), cap)`` before jitter, ``n`` the failed runs so far.
This module repeats that arithmetic over whole milliseconds, for the reader of
the docs (the generator does not import the runtime; a test holds the two to
the same numbers). Jitter, a worker setting, only ever shortens a delay.
"""

from __future__ import annotations

from collections.abc import Callable

from venturi_gen.model import TaskDecl

#: Delays listed before "...", for a task without a backstop of its own.
SHOWN = 8


def _fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


MULTIPLIERS: dict[str, Callable[[int], int]] = {
    "fibonacci": lambda n: _fibonacci(n) - 1,
    "exponential": lambda n: 2 ** (n - 1),
    "linear": lambda n: n,
}


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def describe_retry(t: TaskDecl, duration: Callable[[int], str]) -> list[str]:
    """The Markdown facts of a task's retry policy: curve, backstop and the delays."""
    growth = t.backoff or "fibonacci"
    curve = t.backoff if t.backoff else "the worker's curve (fibonacci by default)"
    limits = f"base {duration(t.retry_ms[0])}, cap {duration(t.retry_ms[1])}" if t.retry_ms else "the worker's base and cap"
    if t.max_failures is None:
        backstop = "dead after the worker's max_failures (25 by default)"
    else:
        backstop = f"dead after {t.max_failures} failed run{'s' if t.max_failures > 1 else ''}"
    return [
        f"- **Retry backoff**: {curve}; {limits}; {backstop}",
        f"- **Retry delays** (before jitter): {_delays(t, MULTIPLIERS[growth], duration)}",
    ]


def _delays(t: TaskDecl, multiplier: Callable[[int], int], duration: Callable[[int], str]) -> str:
    # Retry n follows failed run n; the run that reaches max_failures is not retried.
    last = t.max_failures - 1 if t.max_failures is not None else None
    if last == 0:
        return "none: the first failure is the last"
    count = SHOWN if last is None else min(last, SHOWN)
    more = "" if last is not None and last <= count else ", ..."
    if t.retry_ms is None:
        shown = ", ".join(str(multiplier(n)) for n in range(1, count + 1))
        return f"{shown}{more} times the worker's base, up to its cap"
    base, cap = t.retry_ms
    delays = [duration(base * multiplier(n)) if multiplier(n) else "0s" for n in range(1, count + 1)]
    # Where the cap is reached, if it is before the last retry (or within _SCAN of the start).
    for n in range(1, (last or _SCAN) + 1):
        if base * multiplier(n) >= cap:
            kept = delays[: n - 1]
            gap = ", ..." if n - 1 > count else ""
            return ", ".join([*kept[:count]]) + gap + (", " if kept else "") + (
                f"then {duration(cap)} (the cap) from the {_ordinal(n)} retry on"
            )
    return ", ".join(delays) + more


#: Retries looked through for the cap when the task has no backstop of its own.
_SCAN = 200
