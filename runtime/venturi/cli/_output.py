"""How the ``venturi`` command reads durations and writes what it found.

Every command prints either an aligned text table (for people) or JSON (for
scripts, with ``--json``). Keeping the formatting here keeps the command
modules about *what* to show, and makes every command agree on how a time,
a duration or a missing value looks.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from venturi._priority import Priority

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_UNITS = {
    "ms": timedelta(milliseconds=1),
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
}
DURATION_HELP = "a number with a unit: 500ms, 30s, 5m, 2h, 1d"

#: Shown in a table cell that has no value.
NONE = "-"


def parse_duration(text: str) -> timedelta:
    """``"500ms"``, ``"30s"``, ``"1.5m"``, ``"2h"``, ``"1d"`` -> ``timedelta``; ValueError otherwise."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"invalid duration {text!r}: use {DURATION_HELP}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def format_duration(delta: timedelta) -> str:
    """A short human duration: ``850ms``, ``45s``, ``3m12s``, ``2h05m``, ``1d03h``."""
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


def format_time(moment: datetime | None) -> str:
    """UTC, to the second, for tables: ``2025-01-31 12:00:05Z``."""
    if moment is None:
        return NONE
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC for JSON output."""
    return None if moment is None else moment.astimezone(UTC).isoformat()


def priority_name(value: int) -> str:
    """``2`` -> ``"normal"``; a value outside the named levels stays a number."""
    try:
        return Priority(value).name.lower()
    except ValueError:
        return str(value)


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def write_json(value: Any, out: TextIO | None = None) -> None:
    stream = out if out is not None else sys.stdout
    json.dump(value, stream, indent=2, ensure_ascii=False, sort_keys=False)
    stream.write("\n")


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; no trailing spaces."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines: list[str] = []
    for row in (headers, *rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def write_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO | None = None
) -> None:
    stream = out if out is not None else sys.stdout
    stream.write(render_table(headers, rows) + "\n")
