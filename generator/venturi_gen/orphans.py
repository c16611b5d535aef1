"""Orphaned stubs: user-owned files whose task is no longer declared.

Stubs are never deleted (they hold the user's code), so a removed or renamed
task leaves its stub behind, and so does an upgrade step dropped from a
task's ``upgrades``. Each stub's first line names the package and the task
(and, for an upgrade, the version) it was created for; a stub whose package is
generated in this run but whose task or step is gone is reported as a
warning, with the path, so the user can move its code or delete it. Files
without that first line are the user's own modules and are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from venturi_gen.diagnostics import Diagnostic, Severity
from venturi_gen.layout import display_path

MARKER = re.compile(
    r"^# venturi-gen (handler|merge|upgrade) stub for task ([A-Za-z0-9_]+)"
    r"(?: from version ([0-9]+))? of ([A-Za-z0-9_.]+)\."
)


def upgrade_task(task: str, version: int) -> str:
    """The task part of an upgrade stub's marker triple: one stub per step."""
    return f"{task}@{version}"


def marker(role: str, task: str, package: str) -> str:
    name, _, version = task.partition("@")
    step = f" from version {version}" if version else ""
    return f"# venturi-gen {role} stub for task {name}{step} of {package}."


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
            role, name, version, package = match.groups()
            task = upgrade_task(name, int(version)) if version else name
            if package in packages and (role, task, package) not in expected:
                what = f"task {name} from version {version}" if version else f"task {name}"
                again = "the step in the task's upgrades" if version else "the task"
                found.append(
                    Diagnostic(
                        display_path(path, root), 1, 1, "ORPHANED_STUB",
                        f"{role} stub for {what}, which {package} no longer declares; move "
                        f"your code elsewhere and delete the file, or declare {again} again",
                        Severity.WARNING,
                    )
                )
    return found
