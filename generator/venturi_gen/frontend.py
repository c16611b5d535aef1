"""One declaration file through every per-file check: YAML, schema, semantics.

The result carries the file's diagnostics, its model (when it has no error)
and the few facts that checks across files need — its kinds and the paths it
writes, each with the position to report a collision at. Facts are plain
data so that the cache can keep them for unchanged files, and cross-file
checks run the same way whether a file was parsed now or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from venturi_gen import loader, schema_check, semantic
from venturi_gen.diagnostics import Diagnostic, has_errors
from venturi_gen.facts import Facts
from venturi_gen.layout import GENERATED_FILES, display_path
from venturi_gen.model import ModuleDecl
from venturi_gen.project import outputs


@dataclass(slots=True)
class Checked:
    display: str
    diagnostics: list[Diagnostic]
    facts: Facts
    module: ModuleDecl | None


#: Errors about a value's type that only follow from how YAML 1.1 read it.
_CONSEQUENCES = frozenset({"DEFAULT_TYPE", "WRONG_TYPE", "BAD_VALUE", "FORMAT_VERSION"})


def check_file(display: str, path: Path, content: bytes, root: Path) -> Checked:
    doc = loader.load(display, content)
    checked = _check_document(doc, path, root)
    checked.diagnostics = _with_ambiguities(doc, checked.diagnostics)
    if has_errors(checked.diagnostics):
        checked.module = None
    return checked


def _with_ambiguities(doc: loader.Document, found: list[Diagnostic]) -> list[Diagnostic]:
    """Add an error for each scalar YAML 1.1 and 1.2 read differently.

    Where a string is expected, the checks have already said what YAML 1.1 made of the value
    (``YAML_TYPE_TRAP``), which is the more precise message. A type error at the value
    (``0o17`` for an int: "not a string") is only a consequence of the 1.1 reading and gives
    way to the explanation. Elsewhere (an integer default of ``010``, a boolean written
    ``yes``) nothing else would stop the value.
    """
    if not doc.ambiguous:
        return found
    traps = {(d.line, d.column) for d in found if d.code == "YAML_TYPE_TRAP"}
    ambiguous = {(line, column): message for line, column, message in doc.ambiguous if (line, column) not in traps}
    kept = [d for d in found if not (d.code in _CONSEQUENCES and (d.line, d.column) in ambiguous)]
    kept.extend(Diagnostic(doc.file, line, column, "YAML_TYPE_TRAP", message)
                for (line, column), message in ambiguous.items())
    return kept


def _check_document(doc: loader.Document, path: Path, root: Path) -> Checked:
    display = doc.file
    diagnostics = list(doc.diagnostics)
    facts = Facts()
    if doc.data is None:
        return Checked(display, diagnostics, facts, None)
    schema_errors = schema_check.validate(doc)
    diagnostics.extend(schema_errors)
    if schema_errors:
        return Checked(display, diagnostics, facts, None)
    for name, spec in doc.data["tasks"].items():
        # A task's aliases are kinds too: its jobs may be stored under any of them.
        where: list[tuple[loader.Path, str]] = [(("tasks", name, "kind"), spec["kind"])]
        where += [(("tasks", name, "aliases", i), alias) for i, alias in enumerate(spec.get("aliases", ()))]
        for index, (at, kind) in enumerate(where):
            line, column = doc.position(at)
            facts.kinds.append((kind, name, line, column, index > 0))
    module, found = semantic.build_module(doc, path)
    diagnostics.extend(found)
    if module is not None:
        for written, origin in outputs(module):
            line, column = doc.position(origin, key=origin[0] == "tasks")
            facts.writes.append((display_path(written, root), line, column))
            if written.parent == module.layout.package_dir and written.name in GENERATED_FILES:
                facts.generated.append(display_path(written, root))
        declared = "root" in doc.data
        line, column = doc.position(("root",)) if declared else (1, 1)
        facts.root = (display_path(module.layout.root, root), line, column, declared)
        layout = module.layout
        for key, directory in (("module", layout.package_dir), ("handlers", layout.handlers_dir),
                               ("merges", layout.merges_dir), ("upgrades", layout.upgrades_dir)):
            if key in doc.data:
                facts.directories.append((display_path(directory, root), *doc.position((key,))))
    return Checked(display, diagnostics, facts, module)
