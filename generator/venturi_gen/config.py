"""Configuration: ``[tool.venturi]`` in pyproject.toml, and which declaration files to read.

The project root is the directory of the nearest pyproject.toml (from the
working directory upwards) that has a ``[tool.venturi]`` table, or the one
named by ``--config``; without either, the working directory. Paths in
output (diagnostics, headers) are relative to it, and its
``.venturi-cache/`` holds the cache.

Read from ``[tool.venturi]``: ``inputs``, a list of glob patterns relative to
the project root (``["examples/*/tasks.venturi.yaml"]``, never reaching out
of it with ``..`` or an absolute path), used when no files are named on the
command line. Whatever the inputs, every output stays inside the project
(``confine``). Everything else about a declaration
file's outputs lives in the file itself, so naming a file on the command
line and running bare produce the same code. Other keys of the table belong
to the runtime and are ignored here.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath


class ConfigError(Exception):
    """A usage or configuration problem (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Config:
    root: Path
    pyproject: Path | None
    inputs: tuple[str, ...]  # glob patterns, relative to root


def _tool_table(path: Path) -> dict[str, object] | None:
    try:
        with path.open("rb") as stream:
            document = tomllib.load(stream)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {exc.start})") from None
    table = document.get("tool", {}).get("venturi")
    return table if isinstance(table, dict) else None


def load(cwd: Path, explicit: Path | None = None) -> Config:
    """Find and read the configuration (``explicit`` is ``--config``)."""
    if explicit is not None:
        path = (cwd / explicit).resolve()
        if not path.is_file():
            raise ConfigError(f"--config {explicit}: no such file")
        table = _tool_table(path)
        if table is None:
            raise ConfigError(f"{explicit} has no [tool.venturi] table")
        return Config(path.parent, path, _inputs(path, table))
    for directory in (cwd.resolve(), *cwd.resolve().parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            table = _tool_table(candidate)
            if table is not None:
                return Config(directory, candidate, _inputs(candidate, table))
    return Config(cwd.resolve(), None, ())


def _inputs(path: Path, table: dict[str, object]) -> tuple[str, ...]:
    value = table.get("inputs", [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: [tool.venturi] inputs must be a list of glob patterns (strings)")
    return tuple(value)


def expand(config: Config) -> list[Path]:
    """Files matching the configured patterns, sorted, each once."""
    found: set[Path] = set()
    for pattern in config.inputs:
        if "\0" in pattern:
            raise ConfigError(f"[tool.venturi] inputs: {pattern!r} contains a NUL character")
        if PurePosixPath(pattern).is_absolute() or PureWindowsPath(pattern).anchor:
            raise ConfigError(f"[tool.venturi] inputs: {pattern!r} must be relative to {config.root}")
        if ".." in PurePosixPath(pattern.replace("\\", "/")).parts:
            raise ConfigError(
                f"[tool.venturi] inputs: {pattern!r} reaches outside the project {config.root}; "
                "declaration files belong inside it (list the project's own files)"
            )
        try:
            found.update(path for path in config.root.glob(pattern) if path.is_file())
        except (ValueError, IndexError):  # pathlib's words for "", ".", "x/.."
            raise ConfigError(
                f"[tool.venturi] inputs: {pattern!r} is not a glob pattern of files "
                "(like \"apps/*/tasks.venturi.yaml\")"
            ) from None
    return sorted(found)
