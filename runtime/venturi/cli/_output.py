"""How the ``venturi`` command writes what it found (durations: ``venturi._durations``).

Every command prints either an aligned text table (for people) or JSON (for
scripts, with ``--json``). Keeping the formatting here keeps the command
modules about *what* to show, and makes every command agree on how a time,
a duration or a missing value looks.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from venturi._priority import Priority
from venturi._storable import safe_text

#: Shown in a table cell that has no value.
NONE = "-"


def format_time(moment: datetime | None, *, milliseconds: bool = False) -> str:
    """UTC, to the second for tables (``2025-01-31 12:00:05Z``), or to the millisecond
    (``2025-01-31 12:00:05.042Z``) where runs a few milliseconds apart must stay apart."""
    if moment is None:
        return NONE
    utc = moment.astimezone(UTC)
    if milliseconds:
        return f"{utc:%Y-%m-%d %H:%M:%S}.{utc.microsecond // 1000:03d}Z"
    return utc.strftime("%Y-%m-%d %H:%M:%SZ")


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
