"""Orphaned stubs: user-owned files whose task is no longer declared.

Stubs are never deleted (they hold the user's code), so a removed or renamed
task leaves its stub behind. Each stub's first line names the package and the
task it was created for; a stub whose package is generated in this run but
whose task is gone is reported as a warning, with the path, so the user can
move its code or delete it. Files without that first line are the user's own
modules and are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from venturi_gen.diagnostics import Diagnostic, Severity
from venturi_gen.layout import display_path

MARKER = re.compile(r"^# venturi-gen (handler|merge) stub for task ([A-Za-z0-9_]+) of ([A-Za-z0-9_.]+)\.")


def marker(role: str, task: str, package: str) -> str:
    return f"# venturi-gen {role} stub for task {task} of {package}."


def find(
    directories: Iterable[Path], expected: set[tuple[str, str, str]], packages: set[str], root: Path
) -> list[Diagnostic]:
    """Stubs in ``directories`` for (role, task, package) triples not in ``expected``."""
    found: list[Diagnostic] = []
    for directory in sorted(set(directories)):
        try:
            candidates = sorted(directory.glob("*.py"))
        except OSError:
            continue
        for path in candidates:
            try:
                with path.open(encoding="utf-8", errors="replace") as stream:
                    first = stream.readline()
            except OSError:
                continue
            match = MARKER.match(first)
            if match is None:
                continue
            role, task, package = match.groups()
            if package in packages and (role, task, package) not in expected:
                found.append(
                    Diagnostic(
                        display_path(path, root), 1, 1, "ORPHANED_STUB",
                        f"{role} stub for task {task}, which {package} no longer declares; move "
                        "your code elsewhere and delete the file, or declare the task again",
                        Severity.WARNING,
                    )
                )
    return found
