"""Render a checked ``ModuleDecl`` into Python, as chunks per output file.

Each file is a sequence of top-level chunks (imports, one class, one codec
shape...), already in black's layout; ``formatting`` joins them and hands
the rare chunk the templates could not lay out to black. The producer module
is built by ``render_producer``, the worker interface and stubs by
``render_worker``, the upgrade stubs by ``render_upgrade``; the layout of every
file is in ``templates/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from venturi_gen import formatting
from venturi_gen.layout import OutputKind, stub_paths, upgrade_path
from venturi_gen.model import ModuleDecl
from venturi_gen.orphans import upgrade_task
from venturi_gen.render_producer import package_init, producer
from venturi_gen.render_upgrade import upgrade_stub
from venturi_gen.render_worker import handler_stub, merge_stub, worker


@dataclass(frozen=True, slots=True)
class Rendered:
    """One output file, as its top-level chunks."""

    path: Path
    kind: OutputKind
    chunks: tuple[str, ...]
    stub_marker: tuple[str, str, str] | None = None  # (role, task, package), see ``orphans``


def render(m: ModuleDecl) -> list[Rendered]:
    """Every file of one declaration module, generated and user-owned."""
    package_dir = m.layout.package_dir
    files = [
        Rendered(package_dir / "__init__.py", OutputKind.GENERATED, package_init(m)),
        Rendered(package_dir / "tasks.py", OutputKind.GENERATED, producer(m)),
        Rendered(package_dir / "worker.py", OutputKind.GENERATED, worker(m)),
    ]
    for t in m.tasks:
        handler_path, merge_path = stub_paths(m, t)
        package = m.layout.package
        files.append(
            Rendered(handler_path, OutputKind.STUB, handler_stub(m, t), ("handler", t.name, package))
        )
        if merge_path is not None:
            files.append(Rendered(merge_path, OutputKind.STUB, merge_stub(m, t), ("merge", t.name, package)))
        for step in t.upgrades:
            marker = ("upgrade", upgrade_task(t.name, step.version), package)
            files.append(Rendered(upgrade_path(m, step), OutputKind.STUB, upgrade_stub(m, t, step), marker))
    return files


def text(r: Rendered) -> str:
    """The content of a file: generated modules in black's style at 100 columns and headed by
    the markers that make linters and formatters skip them; stubs, which the user owns and
    formats, at 88 (the default of black and ruff)."""
    if r.kind is OutputKind.GENERATED:
        return formatting.with_markers(formatting.join(formatting.finish(c) for c in r.chunks))
    return formatting.join(formatting.finish(c, formatting.STUB_LINE_LENGTH) for c in r.chunks)
