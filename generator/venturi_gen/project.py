"""Checks across declaration files: kinds are unique, no two files write the same output,
and every output can be written inside the project without replacing a file of the user's.

A kind is the identity of a task in storage, so two tasks with one kind
(or one task's kind the alias of another) would route each other's jobs; the runtime also refuses it at import, but
far too late. Output collisions (two files declaring the same package, or two
tasks sharing a stub path) would make one file's output overwrite another's.
All work on ``facts.Facts``, so cached files take part without a parse (and the paths are
checked again on every run: a symlink may have appeared since the file was cached).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from venturi_gen import confine, ownership
from venturi_gen.diagnostics import Diagnostic
from venturi_gen.facts import Facts
from venturi_gen.layout import GENERATED_FILES, stub_paths, upgrade_path
from venturi_gen.loader import Path as YamlPath
from venturi_gen.model import ModuleDecl


def check_kinds(files: Sequence[tuple[str, Facts]]) -> list[Diagnostic]:
    seen: dict[str, tuple[str, str, int, int, bool]] = {}
    out = []
    for file, facts in files:
        for kind, task, line, column, alias in facts.kinds:
            first = seen.setdefault(kind, (file, task, line, column, alias))
            if first[0] == file and first[1] == task:
                continue
            other_file, other_task, other_line, other_column, other_alias = first
            note = "; an alias counts as a kind" if alias or other_alias else ""
            out.append(
                Diagnostic(
                    file, line, column, "DUPLICATE_KIND",
                    f"kind {kind!r} is already used by task {other_task} "
                    f"({other_file}:{other_line}:{other_column}); every task needs its own kind{note}",
                )
            )
    return out


def check_outputs(files: Sequence[tuple[str, Facts]]) -> list[Diagnostic]:
    owners: dict[str, tuple[str, int, int]] = {}
    out = []
    for file, facts in files:
        for written, line, column in facts.writes:
            first = owners.setdefault(written, (file, line, column))
            if first == (file, line, column):
                continue
            other_file, other_line, other_column = first
            out.append(
                Diagnostic(
                    file, line, column, "OUTPUT_CONFLICT",
                    f"this would write {written}, which {other_file}:{other_line}:{other_column} also "
                    "writes; use another module name, task name or stub package",
                )
            )
    return out


def check_paths(files: Sequence[tuple[str, Facts]], project: Path) -> list[Diagnostic]:
    """Every output inside the project, writable without failing halfway (see ``confine``)."""
    out = []
    directories: dict[Path, tuple[str, str] | None] = {}

    def directory(path: Path) -> tuple[str, str] | None:
        if path not in directories:
            directories[path] = confine.directory_problem(path, project)
        return directories[path]

    for file, facts in files:
        if facts.root is None:
            continue
        shown, line, column, declared = facts.root
        problem = directory(_absolute(project, shown))
        if problem is not None:
            code, message = problem
            if not declared:
                message = f"the outputs of this file go beside it, by default: {message}"
            out.append(Diagnostic(file, line, column, code, message))
            continue
        named = {_absolute(project, shown): (line, column) for shown, line, column in facts.directories}
        generated = set(facts.generated)
        for written, line, column in facts.writes:
            path = _absolute(project, written)
            problem = directory(path.parent)
            if problem is not None:  # at the key naming the directory, if one does
                out.append(Diagnostic(file, *named.get(path.parent, (line, column)), *problem))
                continue
            problem = confine.file_problem(path, project)
            if problem is not None:
                out.append(Diagnostic(file, line, column, *problem))
            elif written in generated and ownership.foreign(path):
                package = ".".join(Path(os.path.relpath(path.parent, _absolute(project, shown))).parts)
                out.append(Diagnostic(file, line, column, "WOULD_OVERWRITE", ownership.refusal(written, package)))
    return out


def _absolute(project: Path, display: str) -> Path:
    return Path(os.path.normpath(project / display))


def outputs(m: ModuleDecl) -> list[tuple[Path, YamlPath]]:
    """Every file a module writes, with the declaration node that decides it."""
    package = m.layout.package_dir
    result: list[tuple[Path, YamlPath]] = [
        (package / name, ("module",)) for name in GENERATED_FILES
    ]
    for t in m.tasks:
        handler, merge = stub_paths(m, t)
        result.append((handler, ("tasks", t.name)))
        if merge is not None:
            result.append((merge, ("tasks", t.name)))
        for step in t.upgrades:
            result.append((upgrade_path(m, step), ("tasks", t.name, "upgrades", f"v{step.version}")))
    return result
