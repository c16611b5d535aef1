"""How a duration of a declaration (``90s``, ``1h30m``) is written in generated Python.

Durations are read by the runtime's parser (``venturi._durations``): one grammar for
declarations, the ``venturi`` command and what it prints.
"""

from __future__ import annotations

_LARGEST_FIRST = (("days", 86_400_000), ("hours", 3_600_000), ("minutes", 60_000), ("seconds", 1000))


def timedelta_expr(ms: int) -> str:
    """``timedelta(minutes=2)``: the largest unit that expresses ``ms`` exactly."""
    for unit, size in _LARGEST_FIRST:
        if ms % size == 0:
            return f"timedelta({unit}={ms // size})"
    return f"timedelta(milliseconds={ms})"
