"""Durations as people write them: ``500ms``, ``1.5s``, ``30s``, ``2m``, ``1h30m``, ``7d``.

One grammar and one parser for every place venturi reads a duration: task
declarations (``timeout: 90s``, read by venturi-gen), the ``venturi``
command's options (``--lease 30s``), and what ``venturi stats`` prints
(``3m12s`` parses back). A duration is one or more parts, each a number
(decimals allowed) and a unit, units from the largest to the smallest and
each at most once; the whole is a whole number of milliseconds.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

#: Units, largest first, in milliseconds.
UNITS_MS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}

#: The grammar, for the JSON Schema of declarations and for error messages.
PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h|d))+$(?!\n)"
HELP = "a number and a unit (ms, s, m, h, d), or several from the largest: 500ms, 1.5s, 90s, 1h30m, 7d"

#: The longest duration read: a century is longer than any lease, timeout or retention, and
#: far below what a timedelta or a database timestamp overflows at.
MAX_MS = 36_500 * UNITS_MS["d"]

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)")
_ORDER = {unit: rank for rank, unit in enumerate(UNITS_MS)}


def parse_ms(text: str) -> int:
    """Milliseconds of ``text``; ``ValueError`` with a sentence naming the fix otherwise."""
    position = 0
    total = Decimal(0)
    last = -1
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        unit = match.group(2)
        if _ORDER[unit] <= last:
            raise ValueError(
                f"invalid duration {text!r}: write the units from the largest to the smallest, "
                f"each once (e.g. 1h30m)"
            )
        last = _ORDER[unit]
        total += Decimal(match.group(1)) * UNITS_MS[unit]
        position = match.end()
    if position != len(text) or not text:
        raise ValueError(f"invalid duration {text!r}: use {HELP}")
    if total != total.to_integral_value():
        raise ValueError(f"invalid duration {text!r}: the smallest step is a millisecond")
    if total > MAX_MS:
        raise ValueError(f"duration {text!r} is longer than {MAX_MS // UNITS_MS['d']} days")
    return int(total)


def parse_duration(text: str) -> timedelta:
    """``text`` as a ``timedelta``; ``ValueError`` otherwise (see ``parse_ms``)."""
    return timedelta(milliseconds=parse_ms(text))


def format_duration(delta: timedelta) -> str:
    """A short human duration that ``parse_duration`` reads back: ``850ms``, ``45s``,
    ``3m12s``, ``2h05m``, ``1d03h`` (to the millisecond below a second, then the two
    largest units)."""
    total_ms = max(0, round(delta.total_seconds() * 1000))
    if total_ms < 1000:
        return f"{total_ms}ms"
    seconds = total_ms // 1000
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"
