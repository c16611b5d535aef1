"""One venturi-gen run: inputs → diagnostics → generated code → disk (or a diff).

The order is what makes a run safe:

1. every input is read, parsed, schema-checked and semantically checked, and
   the cross-file checks run (kinds, output collisions, every output path inside
   the project and writable), collecting every diagnostic;
2. if any is an error, the run stops: nothing at all is written;
3. otherwise every output is rendered, formatted and compiled in memory;
4. only then is disk touched — changed generated files and missing stubs are
   staged, then all moved into place (``writer.write_all``: all or nothing);
   existing stubs are never opened for writing. With ``check``, nothing is
   written, not even the cache, and the differences are returned instead.

Two caches (see ``cache``) skip work without changing the result: a run whose
inputs, generator and outputs are all unchanged is answered from the
manifest; otherwise an input whose bytes are unchanged since a good run
reuses its facts and formatted outputs, and only changed inputs are parsed,
rendered and formatted.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from venturi_gen.cache import Cache, input_key, run_key, sha256
from venturi_gen.check import Stale, unified
from venturi_gen.config import Config, ConfigError
from venturi_gen.diagnostics import Diagnostic, Severity, has_errors, sort_unique
from venturi_gen.layout import OutputKind, display_path

if TYPE_CHECKING:
    from venturi_gen.frontend import Checked
    from venturi_gen.model import ModuleDecl

_STUB_PACKAGE_INIT = '"""Your modules for venturi tasks; venturi-gen creates stubs here, never overwrites them."""\n'


@dataclass(slots=True)
class RunResult:
    inputs: list[str]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # generated files (re)written
    created: list[str] = field(default_factory=list)  # stubs created
    unchanged: int = 0
    stale: list[Stale] = field(default_factory=list)  # check mode
    from_cache: bool = False

    @property
    def failed(self) -> bool:
        return has_errors(self.diagnostics) or bool(self.stale)


@dataclass(frozen=True, slots=True)
class _Output:
    display: str
    kind: OutputKind
    content: str | None  # None: an existing stub, not rendered in this run
    marker: tuple[str, str, str] | None = None  # (role, task, package) of a stub

    def to_json(self) -> list[Any]:
        return [self.display, self.kind.value, self.content, list(self.marker) if self.marker else None]

    @classmethod
    def from_json(cls, data: list[Any]) -> _Output:
        marker = (str(data[3][0]), str(data[3][1]), str(data[3][2])) if data[3] else None
        return cls(data[0], OutputKind(data[1]), data[2], marker)


def run(config: Config, files: list[Path], *, check: bool, use_cache: bool = True) -> RunResult:
    root = config.root
    inputs: list[tuple[str, Path, bytes]] = []
    for path in files:
        try:
            inputs.append((display_path(path, root), path, path.read_bytes()))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    inputs.sort(key=lambda item: item[0])
    result = RunResult([display for display, _, _ in inputs])
    if not inputs:
        return result
    cache = Cache(root, enabled=use_cache, writable=not check)
    refused = cache.outside(root)
    if refused is not None:
        raise ConfigError(refused)
    key = run_key([(display, content) for display, _, content in inputs], "outputs-v1")
    manifest = cache.manifest()
    if manifest is not None and manifest.get("key") == key and _still_valid(manifest, root, result):
        return result
    generated = _generate(inputs, root, cache, result)
    if generated is None:
        return result
    outputs, warnings, stub_dirs = generated
    _apply(outputs, root, check=check, result=result)
    stubs = [o for o in outputs if o.kind is OutputKind.STUB]
    expected = [[*o.marker, o.display] for o in stubs if o.marker is not None]
    # The directories earlier runs put stubs in: a stub package that moved since left its
    # stubs there. They stay recorded for as long as they hold an orphan.
    scanned = sorted({*stub_dirs, *_recorded_dirs(manifest)})
    orphans = _orphans(scanned, expected, root)
    result.diagnostics = sort_unique([*warnings, *orphans])
    stub_dirs = sorted({*stub_dirs, *(posixpath.dirname(d.file) for d in orphans)})
    cache.save_manifest(
        {
            "key": key,
            "generated": {
                o.display: sha256(o.content.encode())
                for o in outputs
                if o.kind is OutputKind.GENERATED and o.content is not None
            },
            "stubs": [o.display for o in stubs],
            "stub_markers": expected,
            "stub_dirs": stub_dirs,
            "warnings": [d.to_json() for d in warnings],
        }
    )
    return result


def _usable(entry: dict[str, Any], root: Path) -> bool:
    """A cached input is usable unless a stub it did not render has disappeared since."""
    return all(
        item[2] is not None or (root / item[0]).exists()
        for item in entry["outputs"]
        if item[1] == OutputKind.STUB.value
    )


def _generate(
    inputs: list[tuple[str, Path, bytes]], root: Path, cache: Cache, result: RunResult
) -> tuple[list[_Output], list[Diagnostic], list[str]] | None:
    """Check everything, then render and format; ``None`` when there are errors.

    Returns the outputs, the warnings, and the stub directories (for orphan detection).
    """
    from venturi_gen import frontend, project
    from venturi_gen.facts import Facts

    entries = cache.inputs()
    used: dict[str, dict[str, Any]] = {}
    diagnostics: list[Diagnostic] = []
    facts: list[tuple[str, Facts]] = []
    fresh: list[tuple[str, frontend.Checked]] = []
    for display, path, content in inputs:
        key = input_key(display, content)
        entry = entries.get(key)
        if entry is not None and _usable(entry, root):
            used[key] = entry
            facts.append((display, Facts.from_json(entry["facts"])))
            diagnostics.extend(Diagnostic.from_json(d) for d in entry["warnings"])
            continue
        checked = frontend.check_file(display, path, content, root)
        diagnostics.extend(checked.diagnostics)
        facts.append((display, checked.facts))
        fresh.append((key, checked))
    diagnostics.extend(project.check_kinds(facts))
    diagnostics.extend(project.check_outputs(facts))
    diagnostics.extend(project.check_paths(facts, root))
    if has_errors(diagnostics):
        result.diagnostics = sort_unique(diagnostics)
        return None
    rendered, broken = _render(fresh, root)
    if broken:
        result.diagnostics = sort_unique([*diagnostics, *broken])
        return None
    used.update(rendered)
    outputs = [_Output.from_json(item) for entry in used.values() for item in entry["outputs"]]
    outputs.sort(key=lambda o: o.display)
    cache.save_inputs(used)
    stub_dirs = sorted({d for entry in used.values() for d in entry["stub_dirs"]})
    return outputs, [d for d in diagnostics if d.severity is Severity.WARNING], stub_dirs


def _render(
    fresh: list[tuple[str, Checked]], root: Path
) -> tuple[dict[str, dict[str, Any]], list[Diagnostic]]:
    """Render checked modules into their files; one cache entry per input.

    Every file is compiled before it can be written: checks on declarations are meant to
    refuse whatever would not compile, and this makes a gap in them an error at the
    declaration, never a module that fails at import after an exit status of 0.
    """
    from venturi_gen import render
    from venturi_gen.pyexpr import NotAName

    modules = {}
    for key, checked in fresh:
        assert checked.module is not None, "a file without errors has a model"
        modules[key] = checked.module
    entries = {}
    broken: list[Diagnostic] = []
    rendered = {}
    for key, checked in fresh:
        try:
            rendered[key] = render.render(modules[key])
        except NotAName as exc:
            broken.append(Diagnostic(checked.display, 1, 1, "GENERATED_INVALID",
                                     f"the code generated from this file would not compile ({exc}); this is "
                                     "a venturi-gen bug: please report it with this declaration file"))
    for key, checked in fresh:
        if key not in rendered:
            continue
        outputs = [
            _Output(
                display_path(r.path, root),
                r.kind,
                # An existing stub is never written, so it is not laid out either.
                render.text(r) if r.kind is OutputKind.GENERATED or not r.path.exists() else None,
                r.stub_marker,
            )
            for r in rendered[key]
        ]
        broken.extend(_uncompilable(checked.display, outputs))
        entries[key] = {
            "facts": checked.facts.to_json(),
            "warnings": [d.to_json() for d in checked.diagnostics if d.severity is Severity.WARNING],
            "outputs": [o.to_json() for o in outputs],
            "stub_dirs": sorted({display_path(d, root) for d in _stub_dirs(modules[key])}),
        }
    return entries, broken


def _stub_dirs(m: ModuleDecl) -> set[Path]:
    """Where a module's stubs go, and where they went by default (a stub package that moved
    since left its stubs there: reported as orphans)."""
    from venturi_gen.semantic import default_upgrades

    layout = m.layout
    defaults = {layout.root / name for name in ("handlers", "merges", "upgrades")}
    defaults.add(layout.root.joinpath(*default_upgrades(layout.handlers).split(".")))
    return {layout.handlers_dir, layout.merges_dir, layout.upgrades_dir, *defaults}


def _uncompilable(source: str, outputs: list[_Output]) -> list[Diagnostic]:
    found = []
    for output in outputs:
        if output.content is None:
            continue
        try:
            compile(output.content, output.display, "exec", dont_inherit=True)
        except SyntaxError as exc:
            found.append(
                Diagnostic(
                    source, 1, 1, "GENERATED_INVALID",
                    f"the code generated from this file does not compile ({output.display}:"
                    f"{exc.lineno or 1}: {exc.msg}); this is "
                    "a venturi-gen bug: please report it with this declaration file",
                )
            )
    return found


def _apply(outputs: list[_Output], root: Path, *, check: bool, result: RunResult) -> None:
    from venturi_gen import writer

    changes: list[writer.Change] = []
    new_directories: set[Path] = set()
    for output in outputs:
        path = root / output.display
        if output.kind is OutputKind.GENERATED:
            assert output.content is not None
            old = writer.read_text(path)
            if old == output.content:
                result.unchanged += 1
            elif check:
                status = "missing" if old is None else "modified"
                result.stale.append(Stale(output.display, status, unified(output.display, old, output.content)))
            else:
                changes.append(writer.Change(path, output.content, create_only=False))
        elif output.content is None or path.exists():
            result.unchanged += 1
        elif check:
            result.stale.append(Stale(output.display, "missing", unified(output.display, None, output.content)))
        else:
            changes.append(writer.Change(path, output.content, create_only=True))
            if not path.parent.exists() and path.parent not in new_directories:
                new_directories.add(path.parent)
                changes.append(writer.Change(path.parent / "__init__.py", _STUB_PACKAGE_INIT, create_only=True))
    try:
        placed = set(writer.write_all(changes, root))
    except writer.WriteError as exc:
        shown = display_path(exc.path, root)
        if exc.staged:
            raise ConfigError(f"cannot write {shown}: {exc.reason}; the files before it in the run "
                              "were written, every file is either untouched or complete") from None
        raise ConfigError(f"cannot write {shown}: {exc.reason}; nothing was written") from None
    for change in changes:
        if change.path in placed:
            (result.created if change.create_only else result.written).append(display_path(change.path, root))


def _recorded_dirs(manifest: dict[str, Any] | None) -> list[str]:
    """The stub directories the last good run's manifest recorded (none without one)."""
    recorded = manifest.get("stub_dirs") if manifest is not None else None
    if not isinstance(recorded, list):
        return []
    return [
        d for d in recorded
        if isinstance(d, str) and not os.path.isabs(d) and not posixpath.normpath(d).startswith("..")
    ]


def _orphans(stub_dirs: list[str], expected: list[list[str]], root: Path) -> list[Diagnostic]:
    from venturi_gen import orphans

    paths = {(role, task, package): display for role, task, package, display in expected}
    packages = {package for _, _, package in paths}
    return orphans.find([root / d for d in stub_dirs], paths, packages, root)


def _still_valid(manifest: dict[str, Any], root: Path, result: RunResult) -> bool:
    """The fast path: every recorded output still on disk with the recorded content."""
    from venturi_gen.writer import read_text

    try:
        generated: dict[str, str] = manifest["generated"]
        stubs = [root / display for display in manifest["stubs"]]
        expected = [[str(part) for part in marker] for marker in manifest["stub_markers"]]
        stub_dirs = _recorded_dirs(manifest)
        warnings = [Diagnostic.from_json(d) for d in manifest["warnings"]]
    except (KeyError, TypeError, ValueError):
        return False
    if any(len(marker) != 4 for marker in expected):  # (role, task, package, path)
        return False
    for display, digest in generated.items():
        content = read_text(root / display)
        if content is None or sha256(content.encode()) != digest:
            return False
    if not all(path.exists() for path in stubs):
        return False
    result.diagnostics = sort_unique([*warnings, *_orphans(stub_dirs, expected, root)])
    result.unchanged = len(generated) + len(stubs)
    result.from_cache = True
    return True
