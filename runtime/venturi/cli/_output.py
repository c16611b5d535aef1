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
from venturi._storable import safe_text

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*")  # fullmatch, never "$"
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


#: The longest duration a command takes: a century is longer than any lease or retention.
MAX_DURATION = timedelta(days=36500)


def parse_duration(text: str) -> timedelta:
    """``"500ms"``, ``"30s"``, ``"1.5m"``, ``"2h"``, ``"1d"`` -> ``timedelta``; ValueError otherwise."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"invalid duration {text!r}: use {DURATION_HELP}")
    amount, unit = float(match.group(1)), _UNITS[match.group(2)]
    if amount * unit.total_seconds() > MAX_DURATION.total_seconds():
        raise ValueError(f"duration {text!r} is longer than {MAX_DURATION.days} days")
    return amount * unit


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


def printable_json(text: str) -> str:
    """JSON text that every output can take: a lone surrogate (read back from the
    database) is written as its JSON escape ``\\udXXX`` instead of failing the command.
    JSON allows that escape, and it reads back as the same string."""
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def compact_json(value: Any) -> str:
    return printable_json(
        json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    )


def pretty_json(value: Any, *, sort_keys: bool = True) -> str:
    return printable_json(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys))


def write_json(value: Any, out: TextIO | None = None) -> None:
    stream = out if out is not None else sys.stdout
    stream.write(pretty_json(value, sort_keys=False) + "\n")


def cell(text: str) -> str:
    """One line of printable text: control characters (a newline, an escape sequence that
    would steer the terminal) and what cannot be encoded are written escaped."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in safe_text(text)
    )


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; no trailing spaces."""
    shown = [[cell(value) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in shown:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))
    lines: list[str] = []
    for line in (headers, *shown):
        cells = [value.ljust(widths[i]) for i, value in enumerate(line)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def write_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO | None = None
) -> None:
    stream = out if out is not None else sys.stdout
    stream.write(render_table(headers, rows) + "\n")
