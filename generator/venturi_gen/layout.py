"""Where outputs go, and how paths are shown.

For ``examples/bookmarks/tasks.venturi.yaml`` declaring ``module: bookmarks``
(``root`` defaults to the file's directory):

- ``examples/bookmarks/bookmarks/__init__.py``, ``tasks.py`` (producer) and
  ``worker.py`` (worker interface): generated, rewritten on every run;
- ``examples/bookmarks/handlers/<task_snake>.py``: handler stubs, created once;
- ``examples/bookmarks/merges/<task_snake>.py``: merge stubs for tasks with
  ``on_collision: custom``, created once;
- ``examples/bookmarks/upgrades/<task_snake>_from_v<N>.py``: one upgrade stub per
  declared step of a task's ``upgrades``, created once.

Paths in diagnostics and headers are POSIX paths relative to the project root
(the directory of the pyproject.toml in use), so output never depends on the
machine or the working directory.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

from venturi_gen.model import ModuleDecl, TaskDecl, UpgradeDecl

#: The modules of the generated package, each rewritten on every run.
GENERATED_FILES = ("__init__.py", "tasks.py", "worker.py")


class OutputKind(enum.Enum):
    GENERATED = "generated"  # owned by venturi-gen: rewritten, checked byte for byte
    STUB = "stub"  # owned by the user: created when missing, never overwritten


def stub_paths(m: ModuleDecl, t: TaskDecl) -> tuple[Path, Path | None]:
    """The handler stub of ``t`` and, for ``on_collision: custom``, its merge stub."""
    handler = m.layout.handlers_dir / f"{t.snake}.py"
    merge = m.layout.merges_dir / f"{t.snake}.py" if t.on_collision == "custom" else None
    return handler, merge


def upgrade_path(m: ModuleDecl, step: UpgradeDecl) -> Path:
    """The stub holding the upgrade functions of one step."""
    return m.layout.upgrades_dir / f"{step.snake}.py"


def display_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with forward slashes (``../x`` when outside it)."""
    return Path(os.path.relpath(path, root)).as_posix()


def first_party(m: ModuleDecl) -> frozenset[str]:
    """Top-level packages a stub imports that isort (ruff's ``I`` rules) calls first-party.

    ruff's default finds first-party code under the project root and ``src/``: the
    generated, handler and merge packages live there by construction, and the state
    type's module does if its top-level package is found beside them.
    """
    tops = {module.split(".")[0] for module in (m.layout.package, m.layout.handlers, m.layout.merges)}
    if m.state is not None:
        top = m.state[0].split(".")[0]
        if (m.layout.root / top).is_dir() or (m.layout.root / f"{top}.py").is_file():
            tops.add(top)
    return frozenset(tops)
