"""Durations in declarations (``30s``, ``2m``, ``1h30m``, ``7d``) and their Python rendering."""

from __future__ import annotations

import re

_PART = re.compile(r"([0-9]+)(ms|s|m|h|d)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_LARGEST_FIRST = (("days", 86_400_000), ("hours", 3_600_000), ("minutes", 60_000), ("seconds", 1000))


def parse_ms(text: str) -> int | None:
    """Milliseconds in ``text``, or ``None`` if it is not a duration (the schema's pattern)."""
    position = 0
    total = 0
    for match in _PART.finditer(text):
        if match.start() != position:
            return None
        total += int(match.group(1)) * _UNIT_MS[match.group(2)]
        position = match.end()
    if position != len(text) or not text:
        return None
    return total


def timedelta_expr(ms: int) -> str:
    """``timedelta(minutes=2)``: the largest unit that expresses ``ms`` exactly."""
    for unit, size in _LARGEST_FIRST:
        if ms % size == 0:
            return f"timedelta({unit}={ms // size})"
    return f"timedelta(milliseconds={ms})"
