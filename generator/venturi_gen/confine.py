"""Every output inside the project, at a path the file system can hold: checked before writing.

The project is the directory of the pyproject.toml that holds ``[tool.venturi]`` (or the
working directory, without one). Generated files and stubs belong inside it, so a
declaration's ``root: ../elsewhere``, a declaration file outside the project, or a
package, handler or merge directory that is a symlink leading out of it is an error at
the declaration (``OUTSIDE_PROJECT``), never a file written elsewhere. So is a path the
write would fail on halfway through a run: a name longer than the file system allows
(``PATH_TOO_LONG``), or a file where a directory must go, or the reverse
(``PATH_CONFLICT``). The writer checks the confinement once more right before each
write (``inside``), in case a symlink appeared in between.
"""

from __future__ import annotations

import os
from pathlib import Path


def _limit(path: Path, name: str, default: int) -> int:
    for candidate in (path, *path.parents):
        if os.path.isdir(candidate):
            try:
                return os.pathconf(candidate, name)
            except (OSError, ValueError, AttributeError):  # Windows has no pathconf
                return default
    return default


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def inside(path: Path, project: Path) -> bool:
    """Whether ``path``, following every symlink that exists along it, stays in ``project``."""
    return _real(path).is_relative_to(_real(project))


def _too_long(path: Path, project: Path) -> tuple[str, str] | None:
    """Checked first, from the text alone: the file system refuses even to look at such a path."""
    shown = _shown(path, project)
    name_max = _limit(path, "PC_NAME_MAX", 255)
    for part in path.relative_to(project).parts:
        size = len(os.fsencode(part))
        if size > name_max:
            return "PATH_TOO_LONG", (
                f"{shown[:60]}...: the name {part[:20]}... is {size} bytes, above the file system's "
                f"limit of {name_max}; choose a shorter name"
            )
    path_max = _limit(path, "PC_PATH_MAX", 4096)
    size = len(os.fsencode(str(path)))
    if size >= path_max:
        return "PATH_TOO_LONG", (
            f"{shown[:60]}...: the path is {size} bytes, above the file system's limit of "
            f"{path_max}; choose shorter names"
        )
    return None


def _symlink_out(directory: Path, project: Path) -> Path | None:
    """The first symlink between ``project`` and ``directory`` that leads out of the project."""
    real_project = _real(project)
    current = project
    for part in directory.relative_to(project).parts:
        current = current / part
        if os.path.islink(current) and not _real(current).is_relative_to(real_project):
            return current
    return None


def directory_problem(directory: Path, project: Path) -> tuple[str, str] | None:
    """(code, message) when files cannot be written under ``directory``, else None."""
    if not directory.is_relative_to(project):
        return "OUTSIDE_PROJECT", (
            f"{_shown(directory, project)} is outside the project {project} (the directory of the "
            "pyproject.toml with [tool.venturi]); every output stays inside it"
        )
    problem = _too_long(directory, project)
    if problem is not None:
        return problem
    link = _symlink_out(directory, project)
    if link is not None:
        return "OUTSIDE_PROJECT", (
            f"{_shown(link, project)} is a symlink to {_real(link)}, outside the project {project}; "
            "venturi-gen does not write through it: replace it with a directory"
        )
    for ancestor in (directory, *directory.parents):
        if ancestor == project or not ancestor.is_relative_to(project):
            break
        if os.path.lexists(ancestor) and not os.path.isdir(ancestor):
            return "PATH_CONFLICT", f"{_shown(ancestor, project)} is a file, where a directory must go"
    return None


def file_problem(path: Path, project: Path) -> tuple[str, str] | None:
    """(code, message) when ``path``, a file to write in a directory without a problem, cannot
    be written: a name too long, or a directory in its place."""
    problem = _too_long(path, project)
    if problem is not None:
        return problem
    if os.path.isdir(path):
        return "PATH_CONFLICT", f"{_shown(path, project)} is a directory, where venturi-gen writes a file"
    return None


def _shown(path: Path, project: Path) -> str:
    return Path(os.path.relpath(path, project)).as_posix()
