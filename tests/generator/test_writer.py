"""Atomic output: an error or interrupt while writing leaves each file whole, old or new."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from venturi_gen import writer

from .conftest import Project

DECL = "venturi: 1\nmodule: shop\ntasks:\n  Ship:\n    kind: ship\n    payload:\n      n: int\n"


def test_write_atomic_replaces_and_keeps_permissions(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("old\n")
    target.chmod(0o640)
    writer.write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_failed_replace_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.py"
    target.write_text("old\n")

    def broken(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        writer.write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_create_new_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "stub.py"
    assert writer.create_new(target, "first\n") is True
    assert writer.create_new(target, "second\n") is False
    assert target.read_text() == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stub.py"]


def test_interrupt_mid_run_leaves_every_file_whole(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.write("t.yaml", DECL)
    assert project.gen("t.yaml").code == 0
    before = project.files()
    # A new output type changes both tasks.py and worker.py; interrupt before the second write.
    project.write("t.yaml", DECL + "    output:\n      done: bool\n")
    calls = 0
    real_replace = os.replace

    def interrupted(src: str, dst: str) -> None:
        nonlocal calls
        if str(dst).endswith(".py"):
            calls += 1
            if calls == 2:
                raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    result = project.gen("t.yaml")
    assert result.code == 130
    assert "interrupted; every file is either untouched or complete" in result.err
    after = project.files()
    assert after.keys() == before.keys(), "no temporary file is left behind"
    changed = [path for path in after if after[path] != before[path]]
    assert len(changed) == 1 and after[changed[0]].endswith("\n")
    monkeypatch.setattr(os, "replace", real_replace)
    assert project.gen("t.yaml").code == 0
    assert project.gen("t.yaml", "--check").code == 0
