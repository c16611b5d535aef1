"""Atomic file output: a reader sees the old file or the new one, never half of one.

Each file is written to a temporary file in its own directory and moved over
the target with ``os.replace`` (atomic on POSIX and Windows), so an error or
Ctrl-C mid-run leaves every file either untouched or complete. Unchanged
files are not rewritten, so build tools and editors see stable mtimes.
User-owned stubs are created with ``os.link``, which fails if the file
appeared in the meantime: a stub is never overwritten, even by a race.

No fsync: the guarantee wanted is against interruption, not power loss, and
syncing hundreds of files would dominate the run time.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

_UMASK: int | None = None


def _default_mode() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return 0o666 & ~_UMASK


def _temporary(path: Path, content: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".venturi-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(content)
        os.chmod(tmp, _default_mode())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: Path, content: str) -> None:
    """Replace ``path`` with ``content`` atomically (keeping the old file's permissions)."""
    tmp = _temporary(path, content)
    try:
        with contextlib.suppress(OSError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def create_new(path: Path, content: str) -> bool:
    """Create ``path`` with ``content`` unless it exists; True if this call created it."""
    tmp = _temporary(path, content)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # a filesystem without hard links: exclusive create, then fill
            try:
                with open(path, "x", encoding="utf-8", newline="\n") as stream:
                    stream.write(content)
            except FileExistsError:
                return False
        return True
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
