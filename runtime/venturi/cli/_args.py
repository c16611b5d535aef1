"""Argument types shared by the commands: counts, durations, comma-separated lists.

Each raises ``argparse.ArgumentTypeError`` with a sentence that names the
expected form, which the parser turns into one ``venturi: error:`` line.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import TypeAlias

from venturi._durations import parse_duration

#: What ``add_subparsers`` returns; argparse names no public type for it.
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # pyright: ignore[reportPrivateUsage]

#: The largest count a command takes: a database integer, and more than any batch or limit.
MAX_COUNT = 2**31 - 1


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive whole number, got {text!r}"
        ) from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(
            f"expected a positive whole number up to {MAX_COUNT}, got {text!r}"
        )
    return value


def duration(text: str) -> timedelta:
    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value <= timedelta(0):
        raise argparse.ArgumentTypeError(f"duration {text!r} must be more than zero")
    return value


def duration_or_zero(text: str) -> timedelta:
    """Like ``duration``, but ``0s`` is allowed (no wait at all)."""
    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def comma_list(text: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; empty items are an error."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return items


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535 (0 too: any free port)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}")
    return value
