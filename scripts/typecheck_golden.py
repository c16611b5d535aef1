"""mypy --strict and pyright in strict mode over every golden case's expected output.

Each case under ``tests/generator/golden/<case>/expected`` is the tree a fresh
project gets, with its own top-level ``handlers`` and ``merges`` packages, so
the cases cannot share one import root: mypy runs once per case (with one
shared cache, so the runtime is analysed once), pyright once for all of them
with one execution environment per case. A case whose declarations name a
module of the user's (``state: myapp.runtime:AppState``) keeps it in
``<case>/support``.

Run from anywhere: ``.venv/bin/python scripts/typecheck_golden.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "generator" / "golden"
RUNTIME = REPO / "runtime"
BIN = Path(sys.executable).parent


def _cases() -> list[tuple[str, Path, list[Path]]]:
    """(name, import root, extra search paths) of every case."""
    cases = []
    for expected in sorted(GOLDEN.glob("*/expected")):
        # A case with `root: src` writes its packages under src/.
        root = expected / "src" if (expected / "src").is_dir() else expected
        support = expected.parent / "support"
        cases.append((expected.parent.name, root, [support] if support.is_dir() else []))
    return cases


def _top_level(root: Path) -> list[str]:
    # Namespace packages too: `module: jobs.generated` leaves jobs/ without an __init__.py.
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.rglob("*.py")))


def run_mypy(cache: Path) -> list[str]:
    config = cache / "mypy.ini"
    config.write_text(
        textwrap.dedent(
            """
            [mypy]
            strict = True
            warn_unused_ignores = True
            python_version = 3.11
            explicit_package_bases = True

            [mypy-venturi.*]
            # The runtime is checked by the repository's own mypy run; here it is a dependency.
            follow_imports = silent
            """
        )
    )
    failed = []
    for name, root, extra in _cases():
        path = os.pathsep.join(str(p) for p in [root, *extra, RUNTIME])
        result = subprocess.run(
            [BIN / "mypy", "--config-file", config, "--cache-dir", cache / "mypy",
             *(arg for package in _top_level(root) for arg in ("-p", package))],
            cwd=root, env={**os.environ, "MYPYPATH": path}, capture_output=True, text=True, check=False,
        )
        status = "ok" if result.returncode == 0 else "FAILED"
        print(f"mypy --strict {name}: {status}")
        if result.returncode != 0:
            print(result.stdout + result.stderr)
            failed.append(name)
    return failed


def run_pyright(directory: Path) -> bool:
    cases = _cases()
    config = {
        "typeCheckingMode": "strict",
        "pythonVersion": "3.11",
        # Files outside every case (the runtime itself) are resolved with these.
        "extraPaths": [str(RUNTIME)],
        "executionEnvironments": [
            {"root": str(root), "extraPaths": [*map(str, extra), str(RUNTIME)]} for _, root, extra in cases
        ],
    }
    (directory / "pyrightconfig.json").write_text(json.dumps(config, indent=2))
    files = sorted(str(p) for _, root, _ in cases for p in root.rglob("*.py"))
    result = subprocess.run(
        [BIN / "pyright", "--pythonpath", sys.executable, "-p", directory / "pyrightconfig.json", *files],
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}, capture_output=True, text=True, check=False,
    )
    print(f"pyright (strict mode), {len(cases)} cases, {len(files)} files: {'ok' if result.returncode == 0 else 'FAILED'}")
    if result.returncode != 0:
        print(result.stdout + result.stderr)
    return result.returncode == 0


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="venturi-golden-types-") as tmp:
        failed = run_mypy(Path(tmp))
        pyright_ok = run_pyright(Path(tmp))
    return 0 if not failed and pyright_ok else 1


if __name__ == "__main__":
    sys.exit(main())
