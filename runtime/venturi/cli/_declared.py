"""The task classes a command checks stored jobs against: named modules, or the project's.

``venturi check-backlog`` decodes stored jobs with the generated producer
modules. They are named on the command line (``examples.bookmarks.generated``
or its ``.tasks`` module, importable from the working directory), or found
from the project: the ``[tool.venturi] inputs`` of the nearest
``pyproject.toml`` name the declaration files, and each file's top-level
``module:`` and ``root:`` say which package was generated where (the package
imports as ``<module>.tasks`` with ``<root>`` on ``sys.path``).

The runtime does not read YAML (that is the generator's dependency), and it
needs only those two top-level keys, which the declaration schema keeps to
plain scalars; a file where they cannot be found is named in the error, with
the fix (name the modules).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from venturi._task import Task
from venturi.cli._errors import UsageError
from venturi.cli._imports import import_module, working_directory_on_path

_TOP_LEVEL = re.compile(r"^(module|root):[ \t]*(?P<value>[^#\n]*?)[ \t]*(?:#.*)?$", re.MULTILINE)


def tasks_in(module: ModuleType) -> list[type[Task[Any]]]:
    """The task classes ``module`` defines (not those it imports)."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Task)
        and "KIND" in value.__dict__
        and value.__module__ == module.__name__
    ]


def load_named(names: Sequence[str]) -> list[type[Task[Any]]]:
    """Import each module (a generated package means its ``tasks`` module)."""
    working_directory_on_path()
    found: list[type[Task[Any]]] = []
    for name in names:
        module = import_module(name)
        classes = tasks_in(module)
        if not classes and hasattr(module, "__path__"):
            try:
                classes = tasks_in(importlib.import_module(f"{name}.tasks"))
            except ModuleNotFoundError as exc:
                if exc.name != f"{name}.tasks":
                    raise
        if not classes:
            raise UsageError(f"{name!r} defines no venturi task; name a generated package or its tasks module")
        found.extend(classes)
    return found


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _declared_module(path: Path) -> tuple[str, Path]:
    """(generated package, import root) of one declaration file."""
    try:
        text = path.read_text("utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    keys: dict[str, str] = {}
    for match in _TOP_LEVEL.finditer(text):
        keys.setdefault(match.group(1), _scalar(match.group("value")))
    if not keys.get("module"):
        raise UsageError(
            f"{path}: no top-level `module:` line found; name the generated modules on the "
            "command line instead"
        )
    return keys["module"], Path(os.path.normpath(path.parent / keys.get("root", ".")))


def find_project(start: Path) -> tuple[Path, list[str]] | None:
    """The nearest pyproject.toml with ``[tool.venturi]`` and its ``inputs`` patterns."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            with candidate.open("rb") as stream:
                table = tomllib.load(stream).get("tool", {}).get("venturi")
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"cannot read {candidate}: {exc}") from None
        if isinstance(table, dict):
            inputs = cast(dict[str, object], table).get("inputs", [])
            if not isinstance(inputs, list) or not all(isinstance(p, str) for p in cast(list[object], inputs)):
                raise UsageError(f"{candidate}: [tool.venturi] inputs must be a list of glob patterns")
            return candidate, cast(list[str], inputs)
    return None


def load_project(pyproject: Path | None) -> list[type[Task[Any]]]:
    """The task classes of every declaration file of the project's ``[tool.venturi] inputs``."""
    if pyproject is not None:
        if not pyproject.is_file():
            raise UsageError(f"--config {pyproject}: no such file")
        found = find_project(pyproject.resolve().parent)
    else:
        found = find_project(Path.cwd().resolve())
    if found is None:
        raise UsageError(
            "no generated modules: name them (e.g. myapp.jobs), or run where a pyproject.toml "
            "has [tool.venturi] inputs"
        )
    config, patterns = found
    files = sorted({p for pattern in patterns for p in config.parent.glob(pattern) if p.is_file()})
    if not files:
        raise UsageError(f"{config}: [tool.venturi] inputs match no declaration file")
    classes: list[type[Task[Any]]] = []
    for path in files:
        package, root = _declared_module(path)
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        classes.extend(tasks_in(import_module(f"{package}.tasks")))
    return classes


def by_kind(classes: Sequence[type[Task[Any]]]) -> dict[str, type[Task[Any]]]:
    """Kind and aliases -> task class; a kind claimed twice is a usage error."""
    kinds: dict[str, type[Task[Any]]] = {}
    for cls in classes:
        for kind in (cls.KIND, *cls.ALIASES):
            other = kinds.setdefault(kind, cls)
            if other is not cls:
                raise UsageError(
                    f"kind {kind!r} is claimed by both {other.__module__}.{other.__qualname__} "
                    f"and {cls.__module__}.{cls.__qualname__}"
                )
    return kinds
