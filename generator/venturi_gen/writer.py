"""File output: all of a run's files or none, and a reader sees each old or new, never half.

A run writes in two phases (``write_all``). First every file is staged: its directories
are created and its content is written to a temporary file beside it. Only when every
file is staged are they moved into place with ``os.replace`` (atomic on POSIX and
Windows). So a failure a run can meet (permission denied, a full disk, a name the file
system refuses) happens while staging, and is undone: temporary files and the
directories made for them are removed, and nothing was written. An interrupt during the
second phase still leaves every file either untouched or complete. Unchanged files are
not rewritten, so build tools and editors see stable mtimes. User-owned stubs are created
with ``os.link``, which fails if the file appeared in the meantime: a stub is never
overwritten, even by a race.

Right before each file is staged, its directory is checked again to be inside the
project (``confine.inside``), so a symlink that appeared since the checks cannot lead a
write out of it; and a generated file is replaced only if it is venturi-gen's own
(``ownership``), so a file of the user's that appeared since the checks is not lost.

No fsync: the guarantee wanted is against interruption, not power loss, and
syncing hundreds of files would dominate the run time.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from venturi_gen import confine, ownership

_UMASK: int | None = None


class WriteError(Exception):
    """A file could not be written; ``staged`` is False when nothing at all was written."""

    def __init__(self, path: Path, reason: str, *, staged: bool) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.staged = staged


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    content: str
    create_only: bool  # a stub: created if missing, never replaced


def _default_mode() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


def _make_directories(directory: Path, made: list[Path]) -> None:
    """Create ``directory`` and its missing parents, recording each one made (outermost first)."""
    missing = []
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    for candidate in reversed(missing):
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        made.append(candidate)


def _temporary(path: Path, content: str) -> str:
    # A short fixed name: the target's own name may already be as long as the file system allows.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".venturi-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(content)
        os.chmod(tmp, _default_mode())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _place(change: Change, tmp: str) -> bool:
    """Move the staged ``tmp`` into place; False for a stub that exists by now."""
    if not change.create_only:
        with contextlib.suppress(OSError):
            os.chmod(tmp, change.path.stat().st_mode & 0o7777)
        os.replace(tmp, change.path)
        return True
    try:
        os.link(tmp, change.path)
    except FileExistsError:
        return False
    except OSError:  # a filesystem without hard links: exclusive create, then fill
        try:
            with open(change.path, "x", encoding="utf-8", newline="\n") as stream:
                stream.write(change.content)
        except FileExistsError:
            return False
    return True


def write_all(changes: list[Change], project: Path) -> list[Path]:
    """Write every change, or none (``WriteError``); returns the paths actually written."""
    staged: list[tuple[Change, str]] = []
    made: list[Path] = []
    placed: list[Path] = []
    try:
        for change in changes:
            try:
                if not confine.inside(change.path.parent, project):
                    raise WriteError(change.path, "its directory leads out of the project (a symlink "
                                     "appeared while venturi-gen ran)", staged=False)
                if not change.create_only and ownership.foreign(change.path):
                    raise WriteError(change.path, "it exists and venturi-gen did not write it (it appeared "
                                     "while venturi-gen ran); venturi-gen never overwrites such a file",
                                     staged=False)
                _make_directories(change.path.parent, made)
                staged.append((change, _temporary(change.path, change.content)))
            except OSError as exc:
                raise WriteError(change.path, exc.strerror or str(exc), staged=False) from None
        for change, tmp in staged:
            try:
                if _place(change, tmp):
                    placed.append(change.path)
            except OSError as exc:
                raise WriteError(change.path, exc.strerror or str(exc), staged=True) from None
    except BaseException:
        for _, tmp in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if not placed:
            for directory in reversed(made):
                with contextlib.suppress(OSError):
                    directory.rmdir()
        raise
    for _, tmp in staged:  # a stub's link leaves its temporary name behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return placed


def write_atomic(path: Path, content: str) -> None:
    """Replace ``path`` with ``content`` atomically (keeping the old file's permissions)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path, content)
    try:
        _place(Change(path, content, create_only=False), tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def create_new(path: Path, content: str) -> bool:
    """Create ``path`` with ``content`` unless it exists; True if this call created it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path, content)
    try:
        return _place(Change(path, content, create_only=True), tmp)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist (or is not a readable file).

    CRLF reads as LF: venturi-gen writes LF, and a checkout that converted line endings
    (git's ``core.autocrlf``) holds the same code, not stale code.
    """
    try:
        return path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
