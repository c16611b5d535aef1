"""Checks across declaration files: kinds are unique, and no two files write the same output.

A kind is the identity of a task in storage, so two tasks with one kind
would route each other's jobs; the runtime also refuses it at import, but
far too late. Output collisions (two files declaring the same package, or two
tasks sharing a stub path) would make one file's output overwrite another's.
"""

from __future__ import annotations

from pathlib import Path

from venturi_gen.diagnostics import Diagnostic
from venturi_gen.layout import display_path, stub_paths
from venturi_gen.loader import Document
from venturi_gen.loader import Path as YamlPath
from venturi_gen.model import ModuleDecl


def check_kinds(docs: list[Document]) -> list[Diagnostic]:
    seen: dict[str, tuple[Document, str, YamlPath]] = {}
    out = []
    for doc in docs:
        for name, spec in doc.data["tasks"].items():
            kind = spec["kind"]
            path: YamlPath = ("tasks", name, "kind")
            first = seen.get(kind)
            if first is None:
                seen[kind] = (doc, name, path)
                continue
            other, other_name, other_path = first
            line, column = other.position(other_path)
            out.append(
                doc.error(
                    path, "DUPLICATE_KIND",
                    f"kind {kind!r} is already used by task {other_name} ({other.file}:{line}:{column}); "
                    "every task needs its own kind",
                )
            )
    return out


def outputs(m: ModuleDecl) -> list[tuple[Path, YamlPath]]:
    """Every file a module writes, with the declaration node that decides it."""
    package = m.layout.package_dir
    result: list[tuple[Path, YamlPath]] = [
        (package / name, ("module",)) for name in ("__init__.py", "tasks.py", "worker.py")
    ]
    for t in m.tasks:
        handler, merge = stub_paths(m, t)
        result.append((handler, ("tasks", t.name)))
        if merge is not None:
            result.append((merge, ("tasks", t.name)))
    return result


def check_outputs(modules: list[tuple[ModuleDecl, Document]], root: Path) -> list[Diagnostic]:
    owners: dict[Path, tuple[Document, YamlPath]] = {}
    out = []
    for m, doc in modules:
        for path, origin in outputs(m):
            first = owners.get(path)
            if first is None:
                owners[path] = (doc, origin)
                continue
            other, other_origin = first
            line, column = other.position(other_origin, key=other_origin[0] == "tasks")
            out.append(
                doc.error(
                    origin, "OUTPUT_CONFLICT",
                    f"this would write {display_path(path, root)}, which {other.file}:{line}:{column} "
                    "also writes; use another module name, task name or stub package",
                    key=origin[0] == "tasks",
                )
            )
    return out
