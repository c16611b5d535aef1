"""Helpers for generator tests: a throwaway project and an in-process ``venturi-gen``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from venturi_gen.cli import main

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@dataclass
class Project:
    root: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text("utf-8")

    def gen(self, *args: str) -> Outcome:
        """Run ``venturi-gen ARGS`` in the project root, in this process."""
        self.monkeypatch.chdir(self.root)
        self.capsys.readouterr()
        code = main(list(args))
        captured = self.capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    def files(self) -> dict[str, str]:
        """Every file under the root except declarations and the cache, by POSIX path."""
        return {
            p.relative_to(self.root).as_posix(): p.read_text("utf-8")
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and ".venturi-cache" not in p.parts and not p.name.endswith(".yaml")
            and p.name != "pyproject.toml" and "__pycache__" not in p.parts
        }

    def python(self, code: str, *extra_paths: Path) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a fresh interpreter with the project root on sys.path."""
        paths = [str(self.root), *map(str, extra_paths)]
        prelude = f"import sys; sys.path[:0] = {paths!r}\n"
        return subprocess.run(
            [sys.executable, "-c", prelude + textwrap.dedent(code)],
            capture_output=True, text=True, cwd=self.root, check=False,
        )


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Project:
    return Project(tmp_path, capsys, monkeypatch)
