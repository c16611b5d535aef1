"""One venturi-gen run: inputs → diagnostics → generated code → disk (or a diff).

The order is what makes a run safe:

1. every input is read, parsed, schema-checked and semantically checked, and
   the cross-file checks run, collecting every diagnostic;
2. if any is an error, the run stops: nothing at all is written;
3. otherwise every output is rendered and formatted in memory;
4. only then is disk touched — changed generated files replaced atomically,
   missing stubs created, existing stubs never opened for writing. With
   ``check``, nothing is written and the differences are returned instead.

A run whose inputs and generator are byte-identical to the last good run,
and whose outputs on disk still have the recorded hashes, is answered from
the cache manifest without any of the above (see ``cache``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from venturi_gen.cache import Cache, run_key, sha256
from venturi_gen.check import Stale, unified
from venturi_gen.config import Config, ConfigError
from venturi_gen.diagnostics import Diagnostic, Severity, has_errors, sort_unique
from venturi_gen.layout import OutputKind, display_path

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
    path: Path
    display: str
    kind: OutputKind
    content: str
    stub_marker: tuple[str, str, str] | None = None  # (role, task, package) for stubs


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
    cache = Cache(root, enabled=use_cache)
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
    expected = [list(o.stub_marker) for o in stubs if o.stub_marker is not None]
    result.diagnostics = sort_unique([*warnings, *_orphans(stub_dirs, expected, root)])
    cache.save_manifest(
        {
            "key": key,
            "generated": {o.display: sha256(o.content.encode()) for o in outputs if o.kind is OutputKind.GENERATED},
            "stubs": [o.display for o in stubs],
            "stub_markers": expected,
            "stub_dirs": stub_dirs,
            "warnings": [d.to_json() for d in warnings],
        }
    )
    return result


def _generate(
    inputs: list[tuple[str, Path, bytes]], root: Path, cache: Cache, result: RunResult
) -> tuple[list[_Output], list[Diagnostic], list[str]] | None:
    """Check everything, then render and format; ``None`` when there are errors.

    Returns the outputs, the warnings, and the stub directories (for orphan detection).
    """
    from venturi_gen import formatting, loader, project, render, schema_check, semantic

    diagnostics: list[Diagnostic] = []
    valid = []
    for display, path, content in inputs:
        doc = loader.load(display, content)
        diagnostics.extend(doc.diagnostics)
        if doc.data is None:
            continue
        schema_errors = schema_check.validate(doc)
        diagnostics.extend(schema_errors)
        if not schema_errors:
            valid.append((doc, path))
    diagnostics.extend(project.check_kinds([doc for doc, _ in valid]))
    modules = []
    for doc, path in valid:
        module, found = semantic.build_module(doc, path)
        diagnostics.extend(found)
        if module is not None:
            modules.append((module, doc))
    diagnostics.extend(project.check_outputs(modules, root))
    if has_errors(diagnostics):
        result.diagnostics = sort_unique(diagnostics)
        return None
    rendered = [r for module, _ in modules for r in render.render(module)]
    # Existing stubs are never written, so they need no formatting either.
    wanted = [r for r in rendered if r.kind is OutputKind.GENERATED or not r.path.exists()]
    wanted_ids = {id(r) for r in wanted}
    mode = formatting.mode_fingerprint()
    chunk_cache = cache.chunks(mode)
    formatted = formatting.format_all((c for r in wanted for c in r.chunks), chunk_cache)
    cache.save_chunks(mode, chunk_cache, {formatting.chunk_key(c) for r in wanted for c in r.chunks})
    outputs = []
    for r in rendered:
        text = formatting.join(formatted[c] for c in r.chunks) if id(r) in wanted_ids else ""
        outputs.append(_Output(r.path, display_path(r.path, root), r.kind, text, r.stub_marker))
    stub_dirs = sorted(
        {display_path(d, root) for m, _ in modules for d in (m.layout.handlers_dir, m.layout.merges_dir)}
    )
    return outputs, [d for d in diagnostics if d.severity is Severity.WARNING], stub_dirs


def _apply(outputs: list[_Output], root: Path, *, check: bool, result: RunResult) -> None:
    from venturi_gen import writer

    for output in outputs:
        if output.kind is OutputKind.GENERATED:
            old = writer.read_text(output.path)
            if old == output.content:
                result.unchanged += 1
                continue
            if check:
                status = "missing" if old is None else "modified"
                result.stale.append(Stale(output.display, status, unified(output.display, old, output.content)))
            else:
                writer.write_atomic(output.path, output.content)
                result.written.append(output.display)
        elif not output.path.exists():
            if check:
                result.stale.append(Stale(output.display, "missing", unified(output.display, None, output.content)))
                continue
            directory = output.path.parent
            new_directory = not directory.exists()
            if writer.create_new(output.path, output.content):
                result.created.append(output.display)
            if new_directory and writer.create_new(directory / "__init__.py", _STUB_PACKAGE_INIT):
                result.created.append(display_path(directory / "__init__.py", root))
        else:
            result.unchanged += 1


def _orphans(stub_dirs: list[str], expected: list[list[str]], root: Path) -> list[Diagnostic]:
    from venturi_gen import orphans

    markers = {(role, task, package) for role, task, package in expected}
    packages = {package for _, _, package in markers}
    return orphans.find([root / d for d in stub_dirs], markers, packages, root)


def _still_valid(manifest: dict[str, Any], root: Path, result: RunResult) -> bool:
    """The fast path: every recorded output still on disk with the recorded content."""
    from venturi_gen.writer import read_text

    try:
        generated: dict[str, str] = manifest["generated"]
        stubs = [root / display for display in manifest["stubs"]]
        expected = [list(marker) for marker in manifest["stub_markers"]]
        stub_dirs = [str(d) for d in manifest["stub_dirs"]]
        warnings = [Diagnostic.from_json(d) for d in manifest["warnings"]]
    except (KeyError, TypeError, ValueError):
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
