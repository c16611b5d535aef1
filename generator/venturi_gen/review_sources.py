"""The two versions ``venturi-gen review`` compares: the working tree, and a base.

The base is a git revision (``main``, ``origin/main``, a commit) read with
``git ls-tree`` and ``git show`` without touching the working tree, or a
directory holding an earlier copy of the project. Either way the same
``[tool.venturi] inputs`` patterns pick the declaration files, and each file
goes through the same checks as in generation. A base that does not validate is
an error, each of its errors reported where it is in the base: skipped, its files' tasks
would all look added, and any breaking change would pass. ``allow_invalid`` (the
``--allow-invalid-base`` flag) skips such files with a warning instead. The working tree
also goes through the checks across files that generation runs (one kind,
aliases included, per task; no two files writing one output), so the review
never compares a version that ``venturi-gen`` itself would refuse.
"""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path, PurePosixPath

from venturi_gen import frontend, loader, project
from venturi_gen.config import Config, ConfigError
from venturi_gen.diagnostics import Diagnostic, Severity
from venturi_gen.facts import Facts
from venturi_gen.layout import display_path
from venturi_gen.model import ModuleDecl
from venturi_gen.review import Version


def head_version(config: Config, files: list[Path]) -> tuple[Version, list[Diagnostic]]:
    """The working tree's declarations; their own errors are returned, not compared."""
    sources = [(display_path(path, config.root), path, path.read_bytes()) for path in files]
    return _version(sources, config.root, base=False)


def base_version(config: Config, against: str, *, allow_invalid: bool = False) -> tuple[Version, list[Diagnostic]]:
    directory = Path(against)
    if directory.is_dir():
        root = directory.resolve()
        found = sorted(
            {p for pattern in config.inputs for p in root.glob(pattern) if p.is_file()}
        )
        sources = [(display_path(p, root), config.root / p.relative_to(root), p.read_bytes())
                   for p in found]  # fmt: skip
    else:
        names = [n for n in _git(config.root, "ls-tree", "-r", "--name-only", against, ".").splitlines()
                 if any(_matches(n, pattern) for pattern in config.inputs)]  # fmt: skip
        sources = [(name, config.root / name, _git_bytes(config.root, "show", f"{against}:./{name}"))
                   for name in sorted(names)]  # fmt: skip
    return _version(sources, config.root, base=True, allow_invalid=allow_invalid, against=against)


def _version(
    sources: list[tuple[str, Path, bytes]], root: Path, *, base: bool, allow_invalid: bool = False,
    against: str = "",
) -> tuple[Version, list[Diagnostic]]:
    files: dict[str, tuple[ModuleDecl, loader.Document]] = {}
    diagnostics: list[Diagnostic] = []
    facts: list[tuple[str, Facts]] = []
    for display, path, content in sources:
        checked = frontend.check_file(display, path, content, root)
        facts.append((display, checked.facts))
        if checked.module is None:
            if base and allow_invalid:
                diagnostics.append(Diagnostic(
                    display, 1, 1, "REVIEW_BASE_INVALID",
                    "the base version of this file does not validate; it was not reviewed",
                    Severity.WARNING,
                ))  # fmt: skip
            elif base:
                diagnostics.extend(_in_base(d, against) for d in checked.diagnostics if d.severity is Severity.ERROR)
            else:
                diagnostics.extend(checked.diagnostics)
            continue
        files[display] = (checked.module, loader.load(display, content))
    across = [*project.check_kinds(facts), *project.check_outputs(facts)]
    if base and allow_invalid:
        diagnostics.extend(
            Diagnostic(d.file, d.line, d.column, "REVIEW_BASE_INVALID",
                       f"the base version does not validate ({d.code}: {d.message}); its tasks "
                       "were compared as far as they could be", Severity.WARNING)
            for d in across
        )  # fmt: skip
    elif base:
        diagnostics.extend(_in_base(d, against) for d in across)
    else:
        diagnostics.extend(across)
    return Version(files), diagnostics


def _in_base(d: Diagnostic, against: str) -> Diagnostic:
    """An error of the base, at its place in the base version of the file."""
    return Diagnostic(d.file, d.line, d.column, "REVIEW_BASE_INVALID",
                      f"in the base ({against}): {d.code}: {d.message}")  # fmt: skip


def _matches(name: str, pattern: str) -> bool:
    """``name`` (a relative posix path) matches a glob pattern where ``**`` spans directories."""
    return _match_parts(PurePosixPath(name).parts, PurePosixPath(pattern).parts)


def _match_parts(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match_parts(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pattern[0]) and _match_parts(
        parts[1:], pattern[1:]
    )


def _git(cwd: Path, *args: str) -> str:
    return _git_bytes(cwd, *args).decode("utf-8", "replace")


def _git_bytes(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise ConfigError("--against: git is not installed, and no directory of that name exists") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(
            f"--against {args[-2] if args[0] == 'ls-tree' else args[-1]}: neither a directory nor "
            f"a git revision here ({detail[-1] if detail else 'git failed'})"
        )
    return done.stdout
