"""``--check``: what a fresh generation would change, as a readable, bounded diff.

Generated files are compared byte for byte with what this run produced in
memory; a missing handler or merge stub counts as stale too, since
``venturi-gen`` would create it. Nothing is written. Diffs are unified
(``a/`` on disk, ``b/`` expected), capped per file and in total so that a
CI log stays readable when everything changed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

PER_FILE_LINES = 200
TOTAL_LINES = 2000


@dataclass(frozen=True, slots=True)
class Stale:
    path: str  # display path
    status: str  # "modified" (hand-edited or out of date), "missing"
    diff: str


def unified(path: str, old: str | None, new: str, *, limit: int = PER_FILE_LINES) -> str:
    """A unified diff from ``old`` (on disk; None when missing) to ``new``, capped at ``limit`` lines."""
    lines = list(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"a/{path}",
            tofile=f"b/{path}",
            n=3,
        )
    )
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
    if len(lines) > limit:
        rest = len(lines) - limit
        lines = [*lines[:limit], f"... {rest} more diff line{'s' if rest != 1 else ''} not shown\n"]
    return "".join(lines)


def render_report(stale: list[Stale]) -> str:
    """All diffs, within ``TOTAL_LINES``."""
    out: list[str] = []
    used = 0
    for index, item in enumerate(stale):
        lines = item.diff.splitlines(keepends=True)
        if used + len(lines) > TOTAL_LINES:
            remaining = len(stale) - index
            out.append(f"... diffs of {remaining} more file{'s' if remaining != 1 else ''} not shown\n")
            break
        out.extend(lines)
        used += len(lines)
    return "".join(out)
