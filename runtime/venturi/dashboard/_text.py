"""How a stored value is shown on a page: always as text that cannot break it.

Jinja2's autoescaping makes ``<script>`` inert; this module makes the rest
visible: control characters, lone surrogates and bytes that were not UTF-8
(which the storage reads as ``\\xNN``) are written as their escapes, the way
``venturi jobs show`` writes them, so the page encodes as UTF-8 whatever the
database holds and an operator sees exactly what is stored.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from venturi._durations import format_duration
from venturi.cli._output import cell, printable_json


def line(value: object) -> str:
    """One line of text (``None`` as a dash)."""
    if value is None:
        return "-"
    return cell(str(value))


def block(value: str | None) -> str:
    """Several lines of text, each escaped as ``line`` escapes one."""
    if value is None:
        return "-"
    return "\n".join(cell(part) for part in value.split("\n"))


def pretty(value: Any) -> str:
    """A JSON value laid out on several lines, escaped; text that was not JSON as itself."""
    if isinstance(value, str):
        return block(value)
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return block(printable_json(text))


def when(moment: datetime | None) -> str:
    """UTC to the second, as the command line writes it."""
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def when_ms(moment: datetime | None) -> str:
    if moment is None:
        return "-"
    utc = moment.astimezone(UTC)
    return f"{utc:%Y-%m-%d %H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def age(moment: datetime | None, now: datetime) -> str:
    """How long ago ``moment`` was (``3m12s``), or ``in 5m`` for a time to come."""
    if moment is None:
        return "-"
    delta = now - moment
    if delta < timedelta(0):
        return f"in {format_duration(-delta)}"
    return format_duration(delta)


def count(value: int, exact: bool) -> str:
    """``12,345``, or ``≈12,300`` when it was estimated from a sample."""
    if exact:
        return f"{value:,}"
    if value == 0:
        return "≈0"
    digits = len(str(value))
    rounded = round(value, -max(0, digits - 3))
    return f"≈{rounded:,}"


def url(value: object) -> str:
    """A path segment or query value, percent-encoded (a lone surrogate as its UTF-8 bytes
    would be: the link may not find it, but the page never fails)."""
    return quote(str(value).encode("utf-8", "surrogatepass"), safe="")
