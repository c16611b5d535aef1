"""Render a checked ``ModuleDecl`` into unformatted Python, as chunks per output file.

Each file is a sequence of top-level chunks (imports, one class, one codec
shape...). ``formatting`` formats and caches chunks one by one, so changing
one task re-formats one class, not the whole module. The producer module is
built by ``render_producer``, the worker interface and stubs by
``render_worker``, the upgrade stubs by ``render_upgrade``; the layout of every file is in ``templates/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from venturi_gen.layout import OutputKind, stub_paths, upgrade_path
from venturi_gen.model import ModuleDecl
from venturi_gen.orphans import upgrade_task
from venturi_gen.render_producer import package_init, producer
from venturi_gen.render_upgrade import upgrade_stub
from venturi_gen.render_worker import handler_stub, merge_stub, worker


@dataclass(frozen=True, slots=True)
class Rendered:
    """One output file before formatting."""

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
