"""Outputs stay inside the project, and a run writes all of its files or none.

The project is the directory of the pyproject.toml with ``[tool.venturi]``. A ``root``
outside it, an absolute ``root``, input patterns reaching out of it, a declaration file
outside it, and package, handler, merge or cache directories that are symlinks leading
out of it are refused; nothing is written through such a symlink. Paths the file system
would refuse halfway through a run (names too long, a file where a directory goes) are
errors before anything is written, and a write that fails undoes the whole run.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from venturi_gen import writer

from .conftest import Project
from .test_hostile_names import DIAGNOSTIC

TASKS = "tasks:\n  Ship:\n    kind: ship\n    payload: {n: int}\n    dedup: {key: n, on_collision: custom}\n"


@pytest.fixture
def inside(project: Project, tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    """A project in ``<tmp>/project`` (with [tool.venturi]) and an ``outside`` directory beside it."""
    base = tmp_path_factory.mktemp("confine")
    root = base / "project"
    root.mkdir()
    outside = base / "outside"
    outside.mkdir()
    project.root = root
    project.write("pyproject.toml", '[tool.venturi]\ninputs = ["*.yaml"]\n')
    return project, outside


def _refused(project: Project, *args: str) -> list[str]:
    result = project.gen(*args)
    assert result.code == 1, result.err
    lines = result.err.splitlines()
    assert lines[-1].endswith("; nothing was written"), result.err
    assert all(DIAGNOSTIC.fullmatch(line) for line in lines[:-1]), result.err
    assert project.files() == {}, "nothing is written"
    return lines[:-1]


def _tree(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


@pytest.mark.parametrize("root", ["../outside", "sub/../../outside", "..", "../project-other"])
def test_a_root_outside_the_project_is_refused(inside: tuple[Project, Path], root: str) -> None:
    project, outside = inside
    project.write("t.yaml", f"venturi: 1\nmodule: shop\nroot: {root}\n" + TASKS)
    found = _refused(project)
    assert len(found) == 1 and found[0].startswith("t.yaml:3:7: error[OUTSIDE_PROJECT]: "), found
    assert f"is outside the project {project.root} (the directory of the pyproject.toml" in found[0]
    assert _tree(outside) == [] and _tree(outside.parent) == ["outside", "project", "project/pyproject.toml",
                                                              "project/t.yaml"]


@pytest.mark.parametrize("root", ["/tmp/venturi-outputs", "C:\\\\outputs", "\\\\\\\\server\\\\share"])
def test_an_absolute_root_is_refused(inside: tuple[Project, Path], root: str) -> None:
    project, _ = inside
    project.write("t.yaml", f'venturi: 1\nmodule: shop\nroot: "{root}"\n' + TASKS)
    found = _refused(project)
    assert len(found) == 1 and found[0].startswith("t.yaml:3:7: error[INVALID_ROOT]: root "), found
    assert "is an absolute path; write it relative to this file" in found[0]


@pytest.mark.parametrize("root", ["src\\0", "sr\\tc", "src\\n"])
def test_a_root_with_a_nul_or_control_character_is_refused(inside: tuple[Project, Path], root: str) -> None:
    project, _ = inside
    project.write("t.yaml", f'venturi: 1\nmodule: shop\nroot: "{root}"\n' + TASKS)
    found = _refused(project)
    assert len(found) == 1 and "t.yaml:3:7: error[INVALID_ROOT]: " in found[0], found
    assert "root is a relative directory path, without control characters" in found[0]


def test_a_root_that_is_a_file_is_refused(inside: tuple[Project, Path]) -> None:
    project, _ = inside
    project.write("notes.txt", "a file\n")
    project.write("t.yaml", "venturi: 1\nmodule: shop\nroot: notes.txt\n" + TASKS)
    result = project.gen()
    assert result.code == 1
    assert result.err.splitlines() == [
        "t.yaml:3:7: error[PATH_CONFLICT]: notes.txt is a file, where a directory must go",
        "venturi-gen: 1 error; nothing was written",
    ]
    assert project.files() == {"notes.txt": "a file\n"}


@pytest.mark.parametrize("pattern", ["../outside/*.yaml", "apps/../../outside/t.yaml", "/etc/*.yaml"])
def test_input_patterns_outside_the_project_are_refused(inside: tuple[Project, Path], pattern: str) -> None:
    project, outside = inside
    (outside / "t.yaml").write_text("venturi: 1\nmodule: shop\n" + TASKS)
    project.write("pyproject.toml", f"[tool.venturi]\ninputs = [{pattern!r}]\n")
    result = project.gen()
    assert result.code == 2
    assert f"venturi-gen: error: [tool.venturi] inputs: {pattern!r}" in result.err
    assert "Traceback" not in result.err
    assert _tree(outside) == ["t.yaml"]


def test_a_declaration_file_outside_the_project_cannot_write_beside_itself(inside: tuple[Project, Path]) -> None:
    project, outside = inside
    (outside / "t.yaml").write_text("venturi: 1\nmodule: shop\n" + TASKS)
    found = _refused(project, "../outside/t.yaml")
    assert found == [
        f"../outside/t.yaml:1:1: error[OUTSIDE_PROJECT]: the outputs of this file go beside it, by "
        f"default: ../outside is outside the project {project.root} (the directory of the pyproject.toml "
        "with [tool.venturi]); every output stays inside it"
    ]
    assert _tree(outside) == ["t.yaml"]


@pytest.mark.parametrize(
    ("link", "key", "position"),
    [("shop", "module", "2:9"), ("handlers", "tasks", "5:3"), ("merges", "tasks", "5:3"),
     ("src", "root", "3:7")],
)
def test_directories_that_are_symlinks_leading_out_are_refused(
    inside: tuple[Project, Path], link: str, key: str, position: str
) -> None:
    project, outside = inside
    (project.root / link).symlink_to(outside, target_is_directory=True)
    root = "root: src\n" if link == "src" else "root: .\n"
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + root + TASKS)
    result = project.gen()
    assert result.code == 1, result.err
    diagnostics = result.err.splitlines()[:-1]
    assert diagnostics and all(
        d.startswith(f"t.yaml:{position}: error[OUTSIDE_PROJECT]: {link} is a symlink to {outside}, outside "
                     f"the project {project.root}; venturi-gen does not write through it") for d in diagnostics
    ), diagnostics
    assert _tree(outside) == [], "nothing is written through the symlink"
    assert not (project.root / "shop").is_dir() or link == "shop"


def test_a_symlink_that_stays_inside_the_project_is_followed(inside: tuple[Project, Path]) -> None:
    project, _ = inside
    (project.root / "real").mkdir()
    (project.root / "shop").symlink_to(project.root / "real", target_is_directory=True)
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS)
    result = project.gen()
    assert result.code == 0, result.err
    assert (project.root / "real" / "tasks.py").is_file()


def test_a_cache_directory_leading_out_is_refused(inside: tuple[Project, Path]) -> None:
    project, outside = inside
    (project.root / ".venturi-cache").symlink_to(outside, target_is_directory=True)
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS)
    result = project.gen()
    assert result.code == 2
    assert result.err == (
        f"venturi-gen: error: .venturi-cache is a symlink to {outside}, outside the project "
        f"{project.root}; remove it, or run with --no-cache\n"
    )
    assert project.files() == {} and _tree(outside) == []
    assert project.gen("--no-cache").code == 0
    assert _tree(outside) == []


def test_the_cache_never_writes_through_a_dangling_symlink(inside: tuple[Project, Path]) -> None:
    project, outside = inside
    (project.root / ".venturi-cache").mkdir()
    (project.root / ".venturi-cache" / ".gitignore").symlink_to(outside / "planted")
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS)
    assert project.gen().code == 0
    assert _tree(outside) == []


def test_check_writes_nothing_not_even_the_cache(inside: tuple[Project, Path]) -> None:
    project, _ = inside
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS)
    assert project.gen("--check").code == 1, "stale: nothing generated yet"
    assert not (project.root / ".venturi-cache").exists()
    assert project.gen().code == 0
    cache = {p: p.read_bytes() for p in (project.root / ".venturi-cache").iterdir()}
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS.replace("n: int", "n: string"))
    assert project.gen("--check").code == 1
    assert project.gen("--check").code == 1
    assert {p: p.read_bytes() for p in (project.root / ".venturi-cache").iterdir()} == cache


@pytest.mark.parametrize(
    ("declaration", "position"),
    [
        ("venturi: 1\nmodule: " + "m" * 300 + "\n" + TASKS, "2:9"),
        ("venturi: 1\nmodule: shop\n" + TASKS.replace("Ship", "S" + "hip" * 90), "4:3"),
        ("venturi: 1\nmodule: shop\nhandlers: " + ".".join(["h" * 200] * 25) + "\n" + TASKS, "3:11"),
    ],
)
def test_names_too_long_for_the_file_system_are_refused_before_anything_is_written(
    inside: tuple[Project, Path], declaration: str, position: str
) -> None:
    project, _ = inside
    project.write("t.yaml", declaration)
    found = _refused(project)
    assert found and all(f.startswith(f"t.yaml:{position}: error[PATH_TOO_LONG]: ") for f in found), found
    assert "above the file system's limit of" in found[0]


def test_a_directory_where_a_generated_file_goes_is_refused(inside: tuple[Project, Path]) -> None:
    project, _ = inside
    (project.root / "shop" / "tasks.py").mkdir(parents=True)
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS)
    result = project.gen()
    assert result.code == 1
    assert result.err.splitlines()[0] == (
        "t.yaml:2:9: error[PATH_CONFLICT]: shop/tasks.py is a directory, where venturi-gen writes a file"
    )
    assert _tree(project.root / "shop") == ["tasks.py"]


def test_a_failed_write_undoes_the_whole_run(inside: tuple[Project, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project, _ = inside
    project.write("t.yaml", "venturi: 1\nmodule: shop\n" + TASKS)
    staged = 0
    real = writer._temporary

    def disk_full_at_the_fifth(path: Path, content: str) -> str:
        nonlocal staged
        staged += 1
        if staged == 5:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, content)

    monkeypatch.setattr(writer, "_temporary", disk_full_at_the_fifth)
    result = project.gen()
    assert result.code == 2
    assert result.err.startswith("venturi-gen: error: cannot write ")
    assert result.err.endswith(": No space left on device; nothing was written\n")
    left = [p for p in _tree(project.root) if not p.startswith(".venturi-cache")]
    assert left == ["pyproject.toml", "t.yaml"], "no output, no directory, no temporary file"
    monkeypatch.setattr(writer, "_temporary", real)
    assert project.gen().code == 0
    assert project.gen("--check").code == 0


def test_the_writer_checks_confinement_again_right_before_writing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "late").symlink_to(outside, target_is_directory=True)
    changes = [writer.Change(project / "a.py", "a\n", create_only=False),
               writer.Change(project / "late" / "b.py", "b\n", create_only=False)]
    with pytest.raises(writer.WriteError, match="leads out of the project") as raised:
        writer.write_all(changes, project)
    assert raised.value.staged is False
    assert _tree(outside) == [] and _tree(project) == ["late"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ('[""]', "[tool.venturi] inputs: '' is not a glob pattern of files"),
        ('["."]', "[tool.venturi] inputs: '.' is not a glob pattern of files"),
        ('["a\\u0000b"]', "[tool.venturi] inputs: 'a\\x00b' contains a NUL character"),
    ],
)
def test_unusable_input_patterns_are_usage_errors(inside: tuple[Project, Path], inputs: str, message: str) -> None:
    project, _ = inside
    project.write("pyproject.toml", f"[tool.venturi]\ninputs = {inputs}\n")
    result = project.gen()
    assert result.code == 2
    assert result.err.startswith(f"venturi-gen: error: {message}"), result.err


def test_a_pyproject_that_is_not_utf8_is_a_usage_error(inside: tuple[Project, Path]) -> None:
    project, _ = inside
    (project.root / "pyproject.toml").write_bytes(b'[tool.venturi]\ninputs = ["\xff"]\n')
    result = project.gen()
    assert result.code == 2
    assert result.err == f"venturi-gen: error: {project.root / 'pyproject.toml'}: invalid TOML: not UTF-8 (byte 26)\n"
