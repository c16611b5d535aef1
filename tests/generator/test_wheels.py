"""The built wheels, installed as a user installs them, in fresh virtual environments.

- The runtime alone (``pip install venturi``): the ``venturi`` command and no
  ``venturi-gen``, which could only have said that its dependencies are missing.
- The runtime with the generator beside a black other than the development
  environment's (``pip install 'venturi[gen]' black==24.10.0``): pip resolves
  it, and the generator writes the golden files byte for byte, the case that
  makes it call black included.
- The licence and the project URLs are in both wheels.

CI cost stays bounded: the wheels are built once per session without build
isolation (the development environment's setuptools), and pip's download
cache serves the dependencies after the first run on a machine. They are
built from a clean copy of the sources: a ``build/`` or ``*.egg-info``
directory left in the checkout by an earlier build must not leak into them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from .conftest import REPO

GOLDEN = Path(__file__).parent / "golden"
#: Not the development environment's black (26.x): the oldest year of the allowed range.
OTHER_BLACK = "24.10.0"
PIP = ["-m", "pip", "--disable-pip-version-check", "--no-input"]

pytestmark = pytest.mark.slow


#: A fresh environment sees only what was installed into it.
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=ENV, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="session")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sources = tmp_path_factory.mktemp("sources")
    leftovers = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, sources / name)
    for name in ("runtime", "generator"):
        shutil.copytree(REPO / name, sources / name, ignore=leftovers)
    return sources


@pytest.fixture(scope="session")
def wheels(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    target = tmp_path_factory.mktemp("wheels")
    _run(sys.executable, *PIP, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", target,
         sources, sources / "generator")  # fmt: skip
    built = {p.name.split("-")[0]: p for p in target.glob("*.whl")}
    assert set(built) == {"venturi", "venturi_gen"}, sorted(p.name for p in target.iterdir())
    return built


def _environment(path: Path, *requirements: str | Path) -> Path:
    venv.create(path, with_pip=True)
    _run(path / "bin" / "python", *PIP, "install", "--quiet", *requirements)
    return path / "bin"


def _metadata(wheel: Path) -> tuple[list[str], dict[str, list[str]]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        text = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    message = Parser().parsestr(text)
    return names, {key: message.get_all(key) or [] for key in ("License-Expression", "License-File", "Project-URL")}


def test_both_wheels_carry_the_licence_and_the_project_urls(wheels: dict[str, Path]) -> None:
    for wheel in wheels.values():
        names, metadata = _metadata(wheel)
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
        assert metadata["License-Expression"] == ["MIT"]
        assert metadata["License-File"] == ["LICENSE"]
        urls = dict(entry.split(", ", 1) for entry in metadata["Project-URL"])
        assert {"Homepage", "Documentation", "Repository", "Issues"} <= set(urls)


def test_the_runtime_wheel_carries_the_dashboards_templates_and_static_files(wheels: dict[str, Path]) -> None:
    names, _ = _metadata(wheels["venturi"])
    for shipped in ("templates/base.html", "templates/job.html", "static/dashboard.css", "static/dashboard.js"):
        assert f"venturi/dashboard/{shipped}" in names, shipped


def test_both_sdists_carry_the_licence_and_build_on_their_own(sources: Path, tmp_path: Path) -> None:
    build = "import sys, setuptools.build_meta as b; print(b.build_sdist(sys.argv[1]))"
    expected = {
        sources: ["venturi-0.1.0/LICENSE", "venturi-0.1.0/runtime/venturi/storage/sqlite/queries.sql"],
        sources / "generator": [
            "venturi_gen-0.1.0/LICENSE",
            "venturi_gen-0.1.0/venturi_gen/schemas/venturi-tasks.schema.json",
            "venturi_gen-0.1.0/venturi_gen/templates/task.jinja",
        ],
    }
    for project, members in expected.items():
        name = _run(sys.executable, "-c", build, tmp_path, cwd=project).stdout.strip().splitlines()[-1]
        with tarfile.open(tmp_path / name) as archive:
            names = archive.getnames()
        assert set(members) <= set(names), sorted(names)


def test_the_runtime_alone_has_no_generator_command(wheels: dict[str, Path], tmp_path: Path) -> None:
    bin_dir = _environment(tmp_path / "venv", wheels["venturi"])
    assert (bin_dir / "venturi").is_file()
    assert not (bin_dir / "venturi-gen").exists()
    assert _run(bin_dir / "venturi", "--version").stdout.strip() == "venturi 0.1.0"
    probe = "import importlib.util as u; print(u.find_spec('venturi_gen'), u.find_spec('jinja2'))"
    assert _run(bin_dir / "python", "-c", probe).stdout.strip() == "None None"


def test_the_generator_installs_beside_another_black_and_writes_the_same_bytes(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = _environment(
        tmp_path / "venv", f"{wheels['venturi']}[gen]", wheels["venturi_gen"], f"black=={OTHER_BLACK}"
    )
    _run(bin_dir / "python", *PIP, "check")
    assert OTHER_BLACK in _run(bin_dir / "black", "--version").stdout
    assert _run(bin_dir / "venturi-gen", "--version").stdout.strip() == "venturi-gen 0.1.0"
    for case in ("long_names", "custom_merge"):  # long_names goes through black
        project = tmp_path / case
        project.mkdir()
        shutil.copy(GOLDEN / case / "input.yaml", project / "tasks.venturi.yaml")
        _run(bin_dir / "venturi-gen", "tasks.venturi.yaml", "--no-cache", cwd=project)
        produced = {
            p.relative_to(project).as_posix(): p.read_text("utf-8")
            for p in sorted(project.rglob("*.py")) if "__pycache__" not in p.parts
        }
        expected = {
            p.relative_to(GOLDEN / case / "expected").as_posix(): p.read_text("utf-8")
            for p in sorted((GOLDEN / case / "expected").rglob("*.py"))
        }
        assert produced == expected, case
