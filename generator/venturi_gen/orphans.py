"""Orphaned stubs: user-owned files whose task is no longer declared.

Stubs are never deleted (they hold the user's code), so a removed or renamed
task leaves its stub behind, and so does an upgrade step dropped from a
task's ``upgrades``. Each stub's first line names the package and the task
(and, for an upgrade, the version) it was created for; a stub whose package is
generated in this run but whose task or step is gone is reported as a
warning, with the path, so the user can move its code or delete it. So is a stub
found where its package no longer puts it (a ``handlers:``, ``merges:`` or ``upgrades:``
setting, or its default, changed): the old places looked in are each module's default
stub directories and, through the cache's manifest, the directories earlier runs used.
Files without that first line are the user's own modules and are left alone.
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
    directories: Iterable[Path], expected: dict[tuple[str, str, str], str], packages: set[str], root: Path
) -> list[Diagnostic]:
    """Stubs in ``directories`` for (role, task, package) triples not in ``expected``, or
    found elsewhere than the path ``expected`` holds for them (a stub package moved)."""
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
            if package not in packages:
                continue
            what = f"task {name} from version {version}" if version else f"task {name}"
            shown = display_path(path, root)
            now = expected.get((role, task, package))
            if now is None:
                again = "the step in the task's upgrades" if version else "the task"
                message = (f"{role} stub for {what}, which {package} no longer declares; move "
                           f"your code elsewhere and delete the file, or declare {again} again")
            elif now != shown:
                message = (f"{role} stub for {what} of {package}, which venturi-gen now creates at "
                           f"{now} (`{role}s:` or its default changed); move your code there and "
                           "delete this file")
            else:
                continue
            found.append(Diagnostic(shown, 1, 1, "ORPHANED_STUB", message, Severity.WARNING))
    return found
