"""One declaration file through every per-file check: YAML, schema, semantics.

The result carries the file's diagnostics, its model (when it has no error)
and the few facts that checks across files need — its kinds and the paths it
writes, each with the position to report a collision at. Facts are plain
data so that the cache can keep them for unchanged files, and cross-file
checks run the same way whether a file was parsed now or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from venturi_gen import loader, schema_check, semantic
from venturi_gen.diagnostics import Diagnostic
from venturi_gen.layout import display_path
from venturi_gen.model import ModuleDecl
from venturi_gen.project import outputs


@dataclass(slots=True)
class Facts:
    """What cross-file checks need from one file (positions are 1-based line, column)."""

    kinds: list[tuple[str, str, int, int]] = field(default_factory=list)  # kind, task, line, col
    writes: list[tuple[str, int, int]] = field(default_factory=list)  # display path, line, col

    def to_json(self) -> dict[str, Any]:
        return {"kinds": self.kinds, "writes": self.writes}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Facts:
        kinds = [(str(k), str(t), int(line), int(col)) for k, t, line, col in data["kinds"]]
        writes = [(str(p), int(line), int(col)) for p, line, col in data["writes"]]
        return cls(kinds, writes)


@dataclass(slots=True)
class Checked:
    display: str
    diagnostics: list[Diagnostic]
    facts: Facts
    module: ModuleDecl | None


def check_file(display: str, path: Path, content: bytes, root: Path) -> Checked:
    doc = loader.load(display, content)
    diagnostics = list(doc.diagnostics)
    facts = Facts()
    if doc.data is None:
        return Checked(display, diagnostics, facts, None)
    schema_errors = schema_check.validate(doc)
    diagnostics.extend(schema_errors)
    if schema_errors:
        return Checked(display, diagnostics, facts, None)
    for name, spec in doc.data["tasks"].items():
        line, column = doc.position(("tasks", name, "kind"))
        facts.kinds.append((spec["kind"], name, line, column))
    module, found = semantic.build_module(doc, path)
    diagnostics.extend(found)
    if module is not None:
        for written, origin in outputs(module):
            line, column = doc.position(origin, key=origin[0] == "tasks")
            facts.writes.append((display_path(written, root), line, column))
    return Checked(display, diagnostics, facts, module)
